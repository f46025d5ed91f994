//go:build linux

package hermes_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"talaria/sidecar/hermes"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/providertest"

	"golang.org/x/sys/unix"
)

// Close while the real gateway is still starting (spawned, not yet ready) ends it:
// nothing of Hermes outlives the runtime's Close, and Close does not wait for the
// start. The interpreter is the real one behind a wrapper that records the gateway's
// pid.
func TestCloseDuringTheGatewayStartEndsIt(t *testing.T) {
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
	wrapper := filepath.Join(dir, "python")
	os.WriteFile(wrapper, []byte("#!/bin/sh\ncase \"$*\" in *\"-m tui_gateway.entry\"*) echo $$ > "+pidFile+" ;; esac\nexec "+in.Python+" \"$@\"\n"), 0o755) //nolint:errcheck
	home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: "http://127.0.0.1:9/v1"})
	var env []string
	for _, e := range home.Env {
		if !strings.HasPrefix(e, "HERMES_HOME=") {
			env = append(env, e)
		}
	}
	rt := hermes.New(hermes.Options{Python: wrapper, Home: home.Dir, Env: env, StartTimeout: 90 * time.Second, DrainGrace: 20 * time.Second})
	var pid int
	for deadline := time.Now().Add(60 * time.Second); pid == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			rt.Close()
			t.Fatal("the gateway did not start within 60 s")
		}
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	readyBefore := rt.Ready(ctx) == nil
	cancel()
	t0 := time.Now()
	rt.Close()
	took := time.Since(t0)
	if readyBefore {
		t.Fatal("the gateway was ready before Close; the case needs a start in progress")
	}
	if took > 10*time.Second {
		t.Errorf("Close took %s: it waited for the start, or drained a gateway that held nothing", took)
	}
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck
			t.Fatalf("the gateway (pid %d) still runs 5 s after Close", pid)
		}
	}
	// Ready after Close says the runtime is shutting down (or the start's error), never ready.
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Ready(ctx); err == nil {
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
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			r := newRig(t, in, nil)
			// Each turn's one model call asks for the sleep; no turn gets further.
			sleepFor := func(stream, call string) int {
				t.Helper()
				marker := fmt.Sprintf("%d.%03d", 300+time.Now().Unix()%500, time.Now().Nanosecond()/1e6%1000)
				r.provider.Enqueue(providertest.CallTurn("Waiting.", providertest.Call(call, "terminal",
					map[string]any{"command": "sleep " + marker + "; echo done", "timeout": 600})))
				r.start("chat.start", r.chatParams("s1", stream, "wait a while"))
				for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
					if pid := processWithArgs("sleep", marker); pid != 0 {
						sid, _ := unix.Getsid(pid)
						t.Logf("the tool's sleep: pid %d, session %d (this test's: %d)", pid, sid, func() int { s, _ := unix.Getsid(0); return s }())
						return pid
					}
					if time.Now().After(deadline) {
						t.Fatalf("no process runs `sleep %s` 90 s after the turn started", marker)
					}
				}
			}
			ended := func(pid int, when string) {
				t.Helper()
				for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
					if time.Now().After(deadline) {
						syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck
						t.Fatalf("%s: the tool's sleep (pid %d) still runs 10 s later", when, pid)
					}
				}
			}
			first := sleepFor("st_1", "c1")
			gw := gatewayWithEnv(t, "HERMES_HOME="+r.home.Dir)
			if err := syscall.Kill(-gw, syscall.SIGKILL); err != nil {
				t.Fatalf("killing the gateway's process group %d: %v", gw, err)
			}
			ended(first, "the gateway killed")
			second := sleepFor("st_2", "c2")
			r.close()
			ended(second, "the runtime closed")
		})
	}
}

// processWithArgs returns the pid of a process whose command line is exactly args, or 0.
func processWithArgs(args ...string) int {
	want := strings.Join(args, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == want {
			return pid
		}
	}
	return 0
}
