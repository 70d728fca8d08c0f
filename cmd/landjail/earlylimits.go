package main

// Every "landjail run" starts the control groups' probe and stale-group
// sweep from a package initializer, before most of landjail's packages
// initialize and before main (internal/limits/early; BENCHMARKS.md, round
// 7); startLimitsEarly starts it only when that did not.
import _ "github.com/landjail/landjail/internal/limits/early"
