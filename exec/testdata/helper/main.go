// Command helper is the child side of the exec tests: one small network
// or IPC action per invocation, exit status 0 if it succeeded, 1 (with the
// error on stderr) if it was refused.
//
//	helper tcp HOST:PORT     connect (plain TCP)
//	helper bindtcp PORT      listen on 127.0.0.1:PORT (plain TCP)
//	helper mptcp HOST:PORT   connect with MPTCP
//	helper bindmptcp PORT    listen with MPTCP (Go's default for Listen)
//	helper abstract NAME     connect to the abstract UNIX socket @NAME
//	helper kill PID          kill(PID, 0)
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
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
	case "kill":
		var pid int
		if pid, err = strconv.Atoi(arg); err == nil {
			err = syscall.Kill(pid, 0)
		}
	default:
		err = fmt.Errorf("unknown action %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
