package main

// The view's network namespace is started from a package initializer,
// before the rest of landjail's packages initialize (internal/prenet/early;
// BENCHMARKS.md, round 4), when the command line is a root "landjail run"
// with a private network.
import _ "github.com/landjail/landjail/internal/prenet/early"
