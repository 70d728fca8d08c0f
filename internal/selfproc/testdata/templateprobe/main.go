// Command templateprobe prints how many threads the first
// runtime.LockOSThread adds (the runtime's template thread: 1, or 0 once
// it exists), after selfproc.Start with the argument "start"
// (TestStartMakesTemplateThread; a test binary of its own has the
// template thread already).
package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/landjail/landjail/internal/selfproc"
)

func threads() int {
	e, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return -100
	}
	return len(e)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "start" {
		selfproc.Start()
		selfproc.Stat() // its goroutine has run
	}
	time.Sleep(10 * time.Millisecond) // the runtime's own threads settle
	before := threads()
	runtime.LockOSThread()
	fmt.Print(threads() - before)
}
