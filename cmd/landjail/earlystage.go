package main

// A non-root "landjail run" clones its user-namespace stage from a package
// initializer, before most of landjail's packages initialize and before
// main (internal/stagestart/early; BENCHMARKS.md, round 5); startEarly's
// exec.PrestartUserStage adopts it.
import _ "github.com/landjail/landjail/internal/stagestart/early"
