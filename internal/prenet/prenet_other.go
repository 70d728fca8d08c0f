//go:build !linux

package prenet

func start()                    {}
func take() int                 { return -1 }
func pending() bool             { return false }
func reset()                    {}
func peek() (uint64, bool)      { return 0, false }
func startWithMount()           {}
func takeMount() (int, int)     { return -1, -1 }
func peekMount() (uint64, bool) { return 0, false }
