//go:build unix

package acp

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

type execProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// execLaunch runs argv in dir with stdin on the null device, stdout and stderr merged
// into out, in a process group of its own.
func execLaunch(argv []string, dir string, env []string, out io.Writer) (launched, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = mergeEnv(os.Environ(), env)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A background job still holding the output must not keep Wait from returning.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &execProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		// What the command left running in its group goes with it (as in the
		// built-in terminal tool).
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // ESRCH: gone
		close(p.done)
	}()
	return p, nil
}

func (p *execProc) Wait() (int, string) {
	<-p.done
	st := p.cmd.ProcessState
	if st == nil {
		return -1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, unixSignalName(ws.Signal())
	}
	return st.ExitCode(), ""
}

// Kill kills the process group (what the command started in the background too).
func (p *execProc) Kill() {
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // ESRCH: gone
	}
}

func unixSignalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}
