//go:build linux

package hermes_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"talaria/internal/testproc"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/hermes"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"

	"golang.org/x/sys/unix"
)

// Close while the real gateway is still starting (spawned, not yet ready) ends it:
// nothing of Hermes outlives the runtime's Close, and Close does not wait for the
// start. The interpreter is the real one behind a wrapper that records the gateway's
// pid and holds its start: the gateway's interpreter gets a sitecustomize module that
// never returns, so the gateway is mid-start for as long as the test runs (a start
// that could finish before Close would make the case depend on the machine's speed).
// The start limit and the drain grace are an hour: Close returning at all (within the
// tests' deadline) shows it waited for neither.
func TestCloseDuringTheGatewayStartEndsIt(t *testing.T) {
	t.Parallel()
	var in hermestest.Install
	for _, c := range hermestest.All(t) {
		if len(c.Prefix) == 0 {
			in = c
		}
	}
	if in.Python == "" {
		t.Fatal("no Hermes install without a folder-system prefix (scripts/hermes-setup.sh installs 0.19.0 in a venv)")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "gateway.pid")
	hold := filepath.Join(dir, "hold")
	if err := os.Mkdir(hold, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hold, "sitecustomize.py"), []byte("import time\nwhile True:\n    time.sleep(3600)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "python")
	os.WriteFile(wrapper, []byte("#!/bin/sh\ncase \"$*\" in *\"-m tui_gateway.entry\"*) echo $$ > "+pidFile+"; export PYTHONPATH="+hold+" ;; esac\nexec "+in.Python+" \"$@\"\n"), 0o755) //nolint:errcheck
	home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: "http://127.0.0.1:9/v1"})
	var env []string
	for _, e := range home.Env {
		if !strings.HasPrefix(e, "HERMES_HOME=") {
			env = append(env, e)
		}
	}
	rt := hermes.New(hermes.Options{Python: wrapper, Home: home.Dir, Env: env, StartTimeout: time.Hour, DrainGrace: time.Hour})
	var pid int
	if !testwait.Until(func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid != 0
	}) {
		rt.Close()
		t.Fatalf("the gateway did not start within %v", testwait.Timeout)
	}
	gone := false // once gone, the pid may be another process's: never killed then
	t.Cleanup(func() {
		if !gone {
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	readyBefore := rt.Ready(ctx) == nil
	cancel()
	if readyBefore {
		t.Fatal("the gateway was ready before Close; the case needs a start in progress")
	}
	t0 := time.Now()
	closed := make(chan struct{})
	go func() { rt.Close(); close(closed) }()
	testwait.Done(t, closed, "Close during the start (it waited for the start, or drained a gateway that held nothing)")
	took := time.Since(t0)
	testwait.For(t, fmt.Sprintf("the gateway (pid %d) to end after Close", pid), func() bool { return syscall.Kill(pid, 0) != nil })
	gone = true
	// Ready after Close says the runtime is shutting down (or the start's error), never ready.
	if err := rt.Ready(testwait.Context(t)); err == nil {
		t.Error("Ready after Close during the start reported ready")
	}
	t.Logf("Close during the start returned after %s", took.Round(time.Millisecond))
}

// A command of Hermes's terminal tool still running when its gateway dies ends with
// it, however the gateway ended. Hermes runs the command in a session of its own,
// outside the gateway's process group, so the group's kill does not reach it: killed
// here is the gateway's group (what a crash, or the sidecar's own death through the
// parent-death signal, does), and then the runtime closes. The command is a long
// sleep; it carries the gateway's private TMPDIR, by which the runtime finds it.
func TestToolCommandsEndWithTheGateway(t *testing.T) {
	t.Parallel()
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, in, nil)
			// Each turn's one model call asks for the sleep; no turn gets further. It
			// returns the sleep's pid and the turn's reply channel.
			sleepFor := func(stream, call string) (int, chan *protocol.Envelope) {
				t.Helper()
				marker := sleepMarker()
				r.provider.Enqueue(providertest.CallTurn("Waiting.", providertest.Call(call, "terminal",
					map[string]any{"command": "sleep " + marker + "; echo done", "timeout": 600})))
				id, ch := r.start("chat.start", r.chatParams("s1", stream, "wait a while"))
				var pid int
				testwait.For(t, "a process running `sleep "+marker+"` after the turn started", func() bool {
					select {
					case env := <-ch: // the turn cannot end before its sleep does
						t.Fatalf("the turn ended before its sleep ran: %v %s\nframes:\n%s", env.Error, env.Result, r.describe(id))
					default:
					}
					pid = processWithArgs("sleep", marker)
					return pid != 0
				})
				sid, _ := unix.Getsid(pid)
				t.Logf("the tool's sleep: pid %d, session %d (this test's: %d)", pid, sid, func() int { s, _ := unix.Getsid(0); return s }())
				return pid, ch
			}
			ended := func(pid int, when string) {
				t.Helper()
				if !testwait.Until(func() bool { return syscall.Kill(pid, 0) != nil }) {
					syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck
					t.Fatalf("%s: the tool's sleep (pid %d) still runs %v later", when, pid, testwait.Timeout)
				}
			}
			first, firstTurn := sleepFor("st_1", "c1")
			gw := gatewayWithEnv(t, "HERMES_HOME="+r.home.Dir)
			if err := syscall.Kill(-gw, syscall.SIGKILL); err != nil {
				t.Fatalf("killing the gateway's process group %d: %v", gw, err)
			}
			ended(first, "the gateway killed")
			// The chat's next turn once its first has ended (with its gateway): a turn
			// sent before that is refused, the chat being busy.
			if env := waitReply(t, firstTurn); env.Error == nil {
				t.Logf("the first turn, its gateway killed: %s", env.Result)
			} else {
				t.Logf("the first turn, its gateway killed: %v", env.Error)
			}
			second, _ := sleepFor("st_2", "c2")
			r.close()
			ended(second, "the runtime closed")
		})
	}
}

var sleepMarkers atomic.Int64

// sleepMarker is a sleep duration (300 to 800 s) unique to this call: its fraction is
// the clock's nanoseconds (apart from other test processes) plus a counter (apart from
// this process's parallel tests), so processWithArgs finds this call's sleep only.
func sleepMarker() string {
	now := time.Now()
	return fmt.Sprintf("%d.%09d", 300+now.Unix()%500, (int64(now.Nanosecond())+sleepMarkers.Add(1))%1e9)
}

// processWithArgs returns the pid of a process whose command line is exactly args, or 0.
func processWithArgs(args ...string) int {
	pids := testproc.Find(func(p testproc.Process) bool { return slices.Equal(p.Args(), args) })
	if len(pids) == 0 {
		return 0
	}
	return pids[0]
}
