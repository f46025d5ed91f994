//go:build production && !drivers && windows

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// handOver runs bin ARGS on this process's stdin, stdout and stderr and returns its
// exit code (Windows has no exec that keeps the process): 2, after saying why, when it
// could not be started.
func handOver(bin string, args []string) int {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "talaria: cannot start %s: %v: reinstall Talaria\n", bin, err)
		return 2
	}
	return 0
}
