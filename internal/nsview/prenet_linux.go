package nsview

import "github.com/landjail/landjail/internal/prenet"

// The namespace is made and held by package prenet, a leaf that
// cmd/landjail starts from a package initializer (prenet/early).
func prepareNetwork() { prenet.Start() }

// networkPending reports, without waiting, whether PrepareNetwork began
// making a namespace that no Enter has taken yet (it may still be being
// made, or have failed: takeNetwork says).
func networkPending() bool { return prenet.Pending() }

// takeNetwork returns the descriptor of the namespace PrepareNetwork made
// (waiting for it while it is being made), or -1 when there is none:
// PrepareNetwork was not called (from now on it does nothing), failed,
// or another Enter took it. The caller closes it.
func takeNetwork() int { return prenet.Take() }
