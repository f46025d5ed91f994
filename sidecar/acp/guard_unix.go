//go:build unix

package acp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"talaria/sidecar/stderrtail"
	"time"
)

// The guard: a small process between the sidecar and the agent (the sidecar's own
// binary started as `talaria sidecar acp-guard -- <agent command>`). It starts the
// agent in a process group of its own and keeps the read end of a "lifeline" pipe
// whose write end only the sidecar holds. When the sidecar dies for any reason, SIGKILL
// included, the kernel closes that end; the guard reads EOF and kills the agent's whole
// group (and, on Linux, every process that was reparented to it as a child subreaper),
// so no agent process outlives the sidecar. The sidecar also ends an agent on purpose
// by closing the lifeline.

// guardEnvMarker is removed from the agent's environment by the guard (tests start
// the guard through the test binary with it set).
const guardEnvMarker = "TALARIA_ACP_GUARD"

// startProcess starts the agent of c under the guard command guard (argv prefix; the
// agent's command line follows "--"). Agent stderr lines go to stderr, prefixed.
// Errors: the command cannot be found, the guard cannot start, or the guard could not
// start the agent (its message).
func startProcess(c Command, guard []string, guardEnv []string, stderr io.Writer, redact func(string) string) (*process, error) {
	exe, err := resolve(c)
	if err != nil {
		return nil, err
	}
	if len(guard) == 0 {
		return nil, errors.New("no guard command")
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	lifeR, lifeW, err4 := pipe()
	pidR, pidW, err5 := pipe()
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		closeAll()
		return nil, fmt.Errorf("could not create the agent's pipes: %w", err)
	}
	args := append(append(append([]string{}, guard[1:]...), "--", exe), c.Args...)
	cmd := exec.Command(guard[0], args...)
	cmd.Dir = c.Dir
	cmd.Env = mergeEnv(mergeEnv(os.Environ(), c.Env), guardEnv)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.ExtraFiles = []*os.File{lifeR, pidW}
	if err := cmd.Start(); err != nil {
		closeAll()
		if c.Dir != "" {
			if _, serr := os.Stat(c.Dir); serr != nil {
				return nil, fmt.Errorf("the agent's working folder %s does not exist: fix it in Settings, Agents", c.Dir)
			}
		}
		return nil, fmt.Errorf("could not start the agent: %w", err)
	}
	for _, f := range []*os.File{inR, outW, errW, lifeR, pidW} {
		f.Close()
	}
	p := &process{stdin: inW, stdout: outR, done: make(chan struct{}), tail: newLineTail(40, stderr, redact)}
	go p.tail.consume(errR)
	go func() {
		p.exitErr = cmd.Wait()
		errR.Close()
		pidR.Close()
		close(p.done)
	}()
	p.stop = func() { lifeW.Close() }
	p.killFn = func() {
		if p.pid > 0 {
			syscall.Kill(-p.pid, syscall.SIGKILL) //nolint:errcheck // ESRCH: already gone
		}
		cmd.Process.Kill() //nolint:errcheck // already gone
	}

	// The guard reports "pid N" once the agent runs, or "error <why>".
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(pidR).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	var report string
	select {
	case report = <-line:
	case <-time.After(30 * time.Second):
		report = "error the agent guard did not report within 30 s"
	}
	if pid, ok := strings.CutPrefix(report, "pid "); ok {
		if n, err := strconv.Atoi(pid); err == nil && n > 0 {
			p.pid = n
			return p, nil
		}
	}
	lifeW.Close()
	p.kill()
	<-p.done
	inW.Close()
	outR.Close()
	why, _ := strings.CutPrefix(report, "error ")
	if why == "" {
		why = "the agent guard " + p.exited()
		if tail := stderrtail.Telling(p.tail.Last(40), 3); len(tail) > 0 {
			why += ": " + strings.Join(tail, " / ")
		}
	}
	return nil, fmt.Errorf("could not start the agent %s (%s): %s", agentLabel(c), exe, why)
}

// GuardMain is `talaria sidecar acp-guard -- <command> <args>`: it runs the command as
// described above and returns the command's exit status (128+N when signal N killed
// it, 127 when it could not start). File descriptor 3 is the lifeline, 4 the pipe the
// agent's pid (or a start error) is reported on.
func GuardMain(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	life := os.NewFile(3, "lifeline")
	report := os.NewFile(4, "report")
	if len(args) == 0 || life == nil || report == nil {
		fmt.Fprintln(os.Stderr, "talaria sidecar acp-guard: usage: acp-guard -- <command> [args] (started by the ACP runtime)")
		return 2
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	becomeSubreaper()

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = withoutEnv(os.Environ(), guardEnvMarker)
	// A private temporary folder (0700, in the TMPDIR the agent would have had), removed
	// once the agent's whole tree has ended, however it ended: agents leave files there
	// that they delete only in their own clean-up, never run when they are killed
	// (Hermes's ACP server writes its terminal's environment snapshots, the secrets of
	// that environment included, as $TMPDIR/hermes-snap-*.sh).
	if tmp, err := os.MkdirTemp("", "talaria-acp-"); err == nil {
		defer os.RemoveAll(tmp)
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp, "TMP="+tmp, "TEMP="+tmp)
	}
	cmd.SysProcAttr = agentProcAttr()
	// The parent-death signal follows the thread that started the child: keep this
	// goroutine on it for the guard's whole life.
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(report, "error %s\n", oneLine(err.Error()))
		report.Close()
		return 127
	}
	pid := cmd.Process.Pid
	fmt.Fprintf(report, "pid %d\n", pid)
	report.Close()
	// The agent holds its own copies; ours would keep the sidecar's pipes open after
	// the agent exits.
	os.Stdin.Close()
	os.Stdout.Close()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	lifeEnded := make(chan struct{})
	go func() {
		io.Copy(io.Discard, life) //nolint:errcheck // any end of the lifeline ends the agent
		close(lifeEnded)
	}()

	var werr error
	select {
	case werr = <-waited:
	case <-lifeEnded:
		werr = stopGroup(pid, waited)
	case <-term:
		werr = stopGroup(pid, waited)
	}
	syscall.Kill(-pid, syscall.SIGKILL) //nolint:errcheck // leftovers of the agent's group
	reapOrphans(2 * time.Second)
	return exitStatus(werr)
}

// stopGroup asks the agent's process group to end (SIGTERM), kills it after 2 s, and
// returns the agent's wait error.
func stopGroup(pid int, waited <-chan error) error {
	syscall.Kill(-pid, syscall.SIGTERM) //nolint:errcheck // ESRCH: gone already
	select {
	case err := <-waited:
		return err
	case <-time.After(2 * time.Second):
	}
	syscall.Kill(-pid, syscall.SIGKILL) //nolint:errcheck // ESRCH: gone already
	return <-waited
}

func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if envName(kv) != name {
			out = append(out, kv)
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
