// Command helper is the child side of the exec tests: one small network
// or IPC action per invocation, exit status 0 if it succeeded, 1 (with the
// error on stderr) if it was refused.
//
//	helper tcp HOST:PORT     connect (plain TCP)
//	helper bindtcp PORT      listen on 127.0.0.1:PORT (plain TCP)
//	helper mptcp HOST:PORT   connect with MPTCP
//	helper bindmptcp PORT    listen with MPTCP (Go's default for Listen)
//	helper abstract NAME     connect to the abstract UNIX socket @NAME
//	helper unix PATH         connect to the pathname UNIX socket PATH
//	helper udp HOST:PORT     send one UDP datagram
//	helper kill PID          kill(PID, 0)
//	helper parentthreads N   tgkill(ppid, TID, 0) and kill(TID, 0) for every
//	                         TID from ppid to ppid+N: succeeds if any thread
//	                         of the parent other than its leader can be
//	                         signalled (a pooled spawner thread)
//	helper seize TID         tgkill(ppid, TID, 0), PTRACE_SEIZE of TID
//	                         (detached at once), open of its
//	                         /proc/PPID/task/TID/mem: succeeds if any
//	                         works (a live fresh spawner thread)
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: helper tcp|bindtcp|abstract|kill ARG")
		os.Exit(2)
	}
	var err error
	switch arg := os.Args[2]; os.Args[1] {
	case "tcp", "mptcp":
		var d net.Dialer
		d.SetMultipathTCP(os.Args[1] == "mptcp")
		var c net.Conn
		if c, err = d.Dial("tcp", arg); err == nil {
			c.Close()
		}
	case "bindtcp", "bindmptcp":
		var lc net.ListenConfig
		lc.SetMultipathTCP(os.Args[1] == "bindmptcp")
		var l net.Listener
		if l, err = lc.Listen(context.Background(), "tcp", "127.0.0.1:"+arg); err == nil {
			l.Close()
		}
	case "abstract":
		var c net.Conn
		if c, err = net.Dial("unix", "@"+arg); err == nil {
			c.Close()
		}
	case "unix":
		var c net.Conn
		if c, err = net.Dial("unix", arg); err == nil {
			c.Close()
		}
	case "udp":
		var c net.Conn
		if c, err = net.Dial("udp", arg); err == nil {
			_, err = c.Write([]byte("x"))
			c.Close()
		}
	case "kill":
		var pid int
		if pid, err = strconv.Atoi(arg); err == nil {
			err = syscall.Kill(pid, 0)
		}
	case "parentthreads":
		var n int
		if n, err = strconv.Atoi(arg); err == nil {
			err = fmt.Errorf("no thread of parent %d reachable", os.Getppid())
			pp := os.Getppid()
			for tid := pp + 1; tid <= pp+n; tid++ {
				if e := syscall.Tgkill(pp, tid, 0); e == nil {
					fmt.Printf("tgkill(%d, %d, 0) succeeded\n", pp, tid)
					err = nil
				}
				if e := syscall.Kill(tid, 0); e == nil && tgidOf(tid) == pp {
					fmt.Printf("kill(%d, 0) succeeded\n", tid)
					err = nil
				}
			}
		}
	case "seize":
		var tid int
		if tid, err = strconv.Atoi(arg); err == nil {
			pp := os.Getppid()
			sig := syscall.Tgkill(pp, tid, 0)
			_, _, e := syscall.Syscall6(syscall.SYS_PTRACE, 0x4206 /* PTRACE_SEIZE */, uintptr(tid), 0, 0, 0, 0)
			if e == 0 {
				syscall.PtraceDetach(tid)
			}
			mem, merr := os.Open(fmt.Sprintf("/proc/%d/task/%d/mem", pp, tid))
			if merr == nil {
				mem.Close()
			}
			fmt.Printf("tgkill: %v; ptrace seize: %v; open mem: %v\n", sig, e, merr)
			if sig != nil && e != 0 && merr != nil {
				err = fmt.Errorf("thread %d of %d neither signalled nor seized", tid, pp)
			}
		}
	default:
		err = fmt.Errorf("unknown action %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// tgidOf returns the thread group of tid as the kernel reports it in
// /proc/TID/status, or 0 (for example when /proc is not readable: then
// kill(TID) success is counted only if tgkill also succeeded).
func tgidOf(tid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
