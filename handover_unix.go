//go:build production && !drivers && !windows

package main

import (
	"fmt"
	"os"
	"syscall"
)

// handOver replaces this process with bin ARGS (execve: the same process id, stdin,
// stdout and stderr, so whoever started `talaria sidecar` keeps talking to it). It
// returns only when the exec failed: 2, after saying why.
func handOver(bin string, args []string) int {
	err := syscall.Exec(bin, append([]string{bin}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "talaria: cannot start %s: %v: reinstall Talaria\n", bin, err)
	return 2
}
