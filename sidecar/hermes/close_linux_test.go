//go:build linux

package hermes_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"talaria/sidecar/hermes"
	"talaria/sidecar/hermes/hermestest"
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
