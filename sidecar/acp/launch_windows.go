package acp

import (
	"io"
	"os"
	"os/exec"
	"time"
)

type execProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// execLaunch runs argv in dir with stdin on the null device, stdout and stderr merged
// into out.
func execLaunch(argv []string, dir string, env []string, out io.Writer) (launched, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = mergeEnv(os.Environ(), env)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &execProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *execProc) Wait() (int, string) {
	<-p.done
	if st := p.cmd.ProcessState; st != nil {
		return st.ExitCode(), ""
	}
	return -1, ""
}

func (p *execProc) Kill() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill() //nolint:errcheck // gone
	}
}
