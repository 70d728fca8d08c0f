// client.mjs drives landjail-mcp with the official MCP TypeScript SDK
// client over stdio, the way an agent host would, and prints a JSON
// summary on stdout for tsclient_test.go to assert on. It asserts
// nothing itself: the Go test decides.
//
// usage: node client.mjs BIN WORKSPACE MARKER
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, ws, marker] = process.argv.slice(2);
if (!bin || !ws || !marker) {
  console.error("usage: node client.mjs BIN WORKSPACE MARKER");
  process.exit(2);
}

const transport = new StdioClientTransport({
  command: bin,
  args: ["--workspace", ws, "--deny-secrets", "--protect-agent-config"],
  stderr: "inherit",
});
const client = new Client({ name: "landjail-tsclient", version: "0.0.0" });
await client.connect(transport);

const text = (res) =>
  (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

// call returns {isError, text, protocolError} and never throws: a refusal
// must be a tool result, so a thrown JSON-RPC error is recorded, not hidden.
async function call(name, args) {
  try {
    const res = await client.callTool({ name, arguments: args });
    const t = text(res);
    return { isError: res.isError === true, text: t, leaked: t.includes(marker), protocolError: null };
  } catch (e) {
    return { isError: null, text: "", leaked: String(e).includes(marker), protocolError: String(e) };
  }
}

const summary = { server: client.getServerVersion(), tools: [], calls: {}, refusals: {} };
summary.tools = (await client.listTools()).tools.map((t) => t.name).sort();

summary.calls.write_file = await call("write_file", { path: "src/a.txt", content: "alpha\nbeta\n" });
summary.calls.read_file = await call("read_file", { path: "src/a.txt" });
summary.calls.edit_file = await call("edit_file", { path: "src/a.txt", old_string: "beta", new_string: "gamma" });
summary.calls.patch = await call("patch", {
  patch: "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,2 +1,2 @@\n-alpha\n+delta\n gamma\n",
});
summary.calls.read_back = await call("read_file", { path: "src/a.txt" });

summary.refusals.read_outside = await call("read_file", { path: "../outside/secret" });
summary.refusals.read_env = await call("read_file", { path: ".env" });
summary.refusals.write_git_hook = await call("write_file", { path: ".git/hooks/pre-commit", content: "#!/bin/sh\necho pwned\n" });
summary.refusals.bash_outside = await call("bash", { command: "cat ../outside/secret" });

await client.close();
process.stdout.write(JSON.stringify(summary) + "\n");
