package main

// examplesHelp is the EXAMPLES section of landjail --help and landjail
// run --help. Each line is a command TestHelpExamples runs (a run with
// --print-rules added: the flags parse and the policy compiles); a
// comment after "#" says what it does.
const examplesHelp = `EXAMPLES:
   landjail run -- make test                                  # the current directory read-write, the rest of $HOME invisible
   landjail run --deny-secrets --ro /usr/share -- npm test    # .env, id_*, cloud credentials unreadable; /usr/share read-only
   landjail run --connect-tcp 443 -- curl https://example.com # TCP connect to port 443 only
   landjail run --allow-domain registry.npmjs.org -- npm ci   # only that host, through landjail's proxy
   landjail run --timeout 10m --report run.json -- ./build.sh # killed after 10 minutes; what was enforced, as JSON
   landjail run --print-rules --deny-secrets                  # what a run would enforce, without running anything
   landjail doctor                                            # which layer this host gives, and why
   landjail gc --dry-run                                      # private HOMEs and TMPDIRs no run has used for a day`
