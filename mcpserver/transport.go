package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of GuardedTransport's line check.
const (
	// DefaultMaxLineBytes is the longest line GuardedTransport hands on:
	// the SDK's own frame cap (mcp.DefaultMaxLineLength, 16 MiB), which
	// also bounds a write_file carrying a large file.
	DefaultMaxLineBytes = mcp.DefaultMaxLineLength
	// DefaultMaxDepth is the deepest nesting of arrays and objects a line
	// may hold. A tool call's envelope takes 3 levels ({"params":
	// {"arguments": ...}}); CheckToolArgs refuses arguments nested deeper
	// than 64; 128 leaves room for both and keeps every decoder's
	// recursion shallow.
	DefaultMaxDepth = 128
)

// GuardedTransport is mcp.IOTransport (newline-delimited JSON-RPC over a
// reader and a writer, as on stdio) with each line checked before the
// SDK sees it, so that no line a client sends can end the session. The
// SDK's stream decoder stops the connection at the first line that is
// not JSON (and the server with it); through GuardedTransport:
//
//   - a line that is not UTF-8 JSON, or nests arrays and objects deeper
//     than MaxDepth, is answered with a JSON-RPC parse error (code -32700,
//     id null) and dropped;
//   - a line longer than MaxLineBytes is discarded as it is read (never
//     buffered whole) and answered with a parse error too;
//   - valid JSON that is not one JSON-RPC 2.0 message (a number, an
//     object without "jsonrpc": "2.0", a batch array) is answered with
//     an invalid-request error (code -32600, with the line's id when it
//     has a usable one, else null) and dropped. Batches are refused
//     because the SDK ends the connection on a batch once protocol
//     2025-06-18 or later is negotiated, and on an empty one always;
//   - blank lines are skipped; every other line is handed on unchanged.
//
// Error responses are written between whole SDK messages (one lock
// around every Write of the writer), never inside one. The session ends
// at the end of Reader, or on a read error of Reader. Reader and Writer
// are not closed by the transport.
//
// Source: JSON-RPC 2.0 section 5.1 (error codes, id null when it cannot
// be determined); MCP stdio transport (messages are newline-delimited).
type GuardedTransport struct {
	// Reader and Writer carry the session (os.Stdin and os.Stdout for a
	// stdio server).
	Reader io.Reader
	Writer io.Writer
	// MaxLineBytes caps a line, without its newline; 0 means
	// DefaultMaxLineBytes.
	MaxLineBytes int
	// MaxDepth caps nesting; 0 means DefaultMaxDepth.
	MaxDepth int
}

// Connect starts the line check and returns the SDK's connection over
// the checked lines. It implements mcp.Transport; call it once.
func (t *GuardedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	maxLine, maxDepth := t.MaxLineBytes, t.MaxDepth
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	w := &lockedWriter{w: t.Writer}
	pr, pw := io.Pipe()
	go guardLines(t.Reader, pw, w, maxLine, maxDepth)
	inner := &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: maxLine + 2}
	return inner.Connect(ctx)
}

// lockedWriter serialises whole Writes: the SDK writes each message with
// one Write, and so does the guard.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does not close the underlying writer (stdout stays open).
func (l *lockedWriter) Close() error { return nil }

// guardLines copies the valid lines of r to pw and answers the others on
// w, until r ends or the SDK closes its side of pw.
func guardLines(r io.Reader, pw *io.PipeWriter, w io.Writer, maxLine, maxDepth int) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		var err error
		var tooLong bool
		line, tooLong, err = readBoundedLine(br, line[:0], maxLine)
		if tooLong {
			writeError(w, nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: line longer than %d bytes", maxLine))
		} else if len(bytes.TrimSpace(line)) > 0 {
			if id, code, msg := checkLine(line, maxDepth); code != 0 {
				writeError(w, id, code, msg)
			} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return // the SDK closed the connection
			}
		}
		if err != nil {
			pw.CloseWithError(err) // io.EOF: the session ends normally
			return
		}
	}
}

// readBoundedLine reads one line (without "\n") into buf, keeping at
// most maxLine bytes: a longer line is read to its end and dropped
// (tooLong). err is io.EOF (or the read error) after the last line.
func readBoundedLine(br *bufio.Reader, buf []byte, maxLine int) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > maxLine+1 { // +1: the newline
				tooLong = true
				buf = buf[:0]
			} else {
				buf = append(buf, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		if !tooLong && len(buf) > maxLine {
			tooLong, buf = true, buf[:0]
		}
		return buf, tooLong, err
	}
}

// checkLine returns code 0 when line is one JSON-RPC message the SDK will
// accept, else the error to answer with.
func checkLine(line []byte, maxDepth int) (id any, code int64, msg string) {
	if !utf8.Valid(line) {
		return nil, jsonrpc.CodeParseError, "Parse error: not UTF-8"
	}
	if d := jsonDepth(line); d > maxDepth {
		return nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: nested deeper than %d", maxDepth)
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		if err == nil {
			err = errors.New("cannot happen: json.Valid and json.Unmarshal disagree")
		}
		return nil, jsonrpc.CodeParseError, "Parse error: " + err.Error()
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] == '[' {
		return nil, jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported"
	}
	if _, err := jsonrpc.DecodeMessage(trimmed); err != nil {
		return requestID(trimmed), jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error()
	}
	return nil, 0, ""
}

// requestID returns the "id" of an object line when it is a string or a
// number (the ids JSON-RPC allows), else nil (null).
func requestID(line []byte) any {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(m.ID))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	switch v.(type) {
	case string, json.Number:
		return v
	}
	return nil
}

// jsonDepth returns the deepest nesting of arrays and objects in data,
// skipping strings, in one pass without allocating (data need not be
// valid JSON).
func jsonDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// writeError writes one JSON-RPC error response.
func writeError(w io.Writer, id any, code int64, msg string) {
	resp := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, msg
	data, err := json.Marshal(resp)
	if err != nil {
		data = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"cannot happen: marshaling an error response failed"}}`)
	}
	_, _ = w.Write(append(data, '\n'))
}
