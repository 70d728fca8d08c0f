package main

import "github.com/landjail/landjail/internal/cliopts"

// options is the shared policy and run configuration (package cliopts).
type options = cliopts.Options
