package acp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// startProcess starts the agent directly: there is no guard on Windows yet, so an
// agent outlives a sidecar that is killed (a job object would fix that).
func startProcess(c Command, _ []string, _ []string, stderr io.Writer, redact func(string) string) (*process, error) {
	exe, err := resolve(c)
	if err != nil {
		return nil, err
	}
	inR, inW, err1 := os.Pipe()
	outR, outW, err2 := os.Pipe()
	errR, errW, err3 := os.Pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("could not create the agent's pipes: %w", err)
	}
	cmd := exec.Command(exe, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = mergeEnv(os.Environ(), c.Env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW, errR, errW} {
			f.Close()
		}
		return nil, fmt.Errorf("could not start the agent: %w", err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{pid: cmd.Process.Pid, stdin: inW, stdout: outR, done: make(chan struct{}), tail: newLineTail(40, stderr, redact)}
	go p.tail.consume(errR)
	go func() {
		p.exitErr = cmd.Wait()
		errR.Close()
		close(p.done)
	}()
	p.stop = func() { inW.Close() }
	p.killFn = func() { cmd.Process.Kill() } //nolint:errcheck // already gone
	return p, nil
}

// GuardMain is not used on Windows.
func GuardMain(args []string) int {
	fmt.Fprintln(os.Stderr, "talaria sidecar acp-guard: not available on Windows")
	return 2
}
