package hermes_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/hermes"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
)

// A Hermes that cannot be used never crashes the runtime: rpc.hello's Ready answers a
// typed error saying what is wrong and what to do. The interpreters here stand in for
// the ones a user can point Settings at by mistake (each prints what a real one would:
// its version first, then the import's failure); a real Hermes's own cases follow.
func TestReadyExplainsAnUnusableHermes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755) //nolint:errcheck
		return p
	}
	// An interpreter whose Hermes is 0.9.0: no tui_gateway (the probe's three lines).
	old := script("old-hermes", "echo 3.11.2\necho 0.9.0\necho none\n")
	noHermes := script("plain-python", "echo 3.12.3\necho \"ModuleNotFoundError: No module named 'hermes_cli'\" >&2\nexit 1\n")
	oldPython := script("python3.9", "echo 3.9.2\necho '  File \"hermes_cli/__init__.py\", line 3' >&2\necho 'SyntaxError: invalid syntax' >&2\nexit 1\n")
	notPython := script("not-python", "exit 0\n")
	notExecutable := filepath.Join(dir, "config.yaml")
	os.WriteFile(notExecutable, []byte("model: x\n"), 0o644) //nolint:errcheck
	for _, c := range []struct {
		name, python, cond string
		words, hint        []string
	}{
		{"missing", filepath.Join(dir, "no-such-python"), protocol.CondAgentUnavailable, []string{"cannot be run", "no-such-python"}, []string{"Install Hermes Agent"}},
		{"not executable", notExecutable, protocol.CondAgentUnavailable, []string{"cannot be run", "permission denied"}, []string{"Install Hermes Agent"}},
		{"a Python without Hermes", noHermes, protocol.CondAgentUnavailable, []string{"3.12.3", "has no Hermes Agent", "No module named 'hermes_cli'"}, []string{"venv/bin/python"}},
		{"a Python too old", oldPython, protocol.CondAgentUnavailable, []string{"Python 3.9.2", "3.11 or newer"}, []string{"venv/bin/python"}},
		{"not a Python", notPython, protocol.CondAgentUnavailable, []string{"did not answer as a Python interpreter", "printed nothing"}, []string{"venv/bin/python"}},
		{"too old", old, protocol.CondAgentIncompatible, []string{"0.9.0", "0.11.0", "0.19.0"}, []string{"Update Hermes Agent"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pe := readyError(t, hermes.Options{Python: c.python, StartTimeout: testwait.Timeout})
			if pe.Condition() != c.cond {
				t.Fatalf("condition %s: %v", pe.Condition(), pe)
			}
			for _, w := range c.words {
				if !strings.Contains(pe.Message, w) {
					t.Errorf("message %q lacks %q", pe.Message, w)
				}
			}
			for _, w := range c.hint {
				if !strings.Contains(pe.Data.Hint, w) {
					t.Errorf("hint %q lacks %q", pe.Data.Hint, w)
				}
			}
		})
	}
}

// readyError starts a runtime and returns Ready's *protocol.Error. Ready's wait is
// bounded by the start limit plus the tests' deadline.
func readyError(t *testing.T, opts hermes.Options) *protocol.Error {
	t.Helper()
	rt := hermes.New(opts)
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout+testwait.Timeout)
	defer cancel()
	err := rt.Ready(ctx)
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		t.Fatalf("Ready: %v", err)
	}
	return pe
}

// A slow first start of the real Hermes: Ready waits for it (the host shows the
// runtime as starting meanwhile), and one slower than the start limit is a typed
// error that says so and what to do, never a hang. The interpreter is the real one
// behind a wrapper that makes every start of it 2 s slower.
func TestReadyWaitsForASlowStartAndExplainsATimeout(t *testing.T) {
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
	slow := filepath.Join(t.TempDir(), "slow-python")
	os.WriteFile(slow, []byte("#!/bin/sh\nsleep 2\nexec "+in.Python+" \"$@\"\n"), 0o755) //nolint:errcheck
	home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: "http://127.0.0.1:9/v1"})
	var env []string
	for _, e := range home.Env {
		if !strings.HasPrefix(e, "HERMES_HOME=") {
			env = append(env, e)
		}
	}
	t.Run("slower than usual", func(t *testing.T) {
		t.Parallel()
		rt := hermes.New(hermes.Options{Python: slow, Home: home.Dir, Env: env, StartTimeout: testwait.Timeout})
		defer rt.Close()
		t0 := time.Now()
		if err := rt.Ready(testwait.Context(t)); err != nil {
			t.Fatalf("Ready: %v", err)
		}
		if d := time.Since(t0); d < 4*time.Second {
			t.Errorf("ready after %s: the wrapper's two 2 s waits were not waited for", d)
		} else {
			t.Logf("a start with two 2 s waits: ready after %s", d.Round(time.Millisecond))
		}
		if info := rt.Info(); info.AgentVersion != in.Version || info.Dialect != in.Dialect {
			t.Errorf("info %+v", info)
		}
	})
	// The wrapper's two waits (the probe's and the gateway's) are 4 s, more than the
	// limit: the start times out however fast the machine is.
	t.Run("slower than the limit", func(t *testing.T) {
		t.Parallel()
		own := hermestest.NewHome(t, in, hermestest.Config{BaseURL: "http://127.0.0.1:9/v1"}) // the cases run at once
		pe := readyError(t, hermes.Options{Python: slow, Home: own.Dir, Env: env, StartTimeout: 3 * time.Second})
		if pe.Condition() != protocol.CondAgentUnavailable || !strings.Contains(pe.Message, "within 3s") || !strings.Contains(pe.Data.Hint, "first start") {
			t.Errorf("error %v (hint %q)", pe, pe.Data.Hint)
		}
	})
}

// A Hermes whose gateway speaks a contract this runtime does not know is refused with
// agent_incompatible naming its version and the versions checked, never a crash. The
// gateways here are scripted (a real Hermes of an unknown contract does not exist yet):
// a Python stand-in answers the probe as Hermes 0.30.0 and runs a gateway that sends
// gateway.ready and answers only what the case says.
func TestReadyRefusesAnUnknownGatewayContract(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for the scripted gateway: ", err)
	}
	dir := t.TempDir()
	gateway := filepath.Join(dir, "gateway.py")
	os.WriteFile(gateway, []byte(`import json, os, sys
answers = json.loads(os.environ["FAKE_ANSWERS"])
print(json.dumps({"jsonrpc": "2.0", "method": "event", "params": {"type": "gateway.ready", "payload": {}}}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    if "id" not in req or "method" not in req:
        continue
    if req["method"] in answers:
        out = {"jsonrpc": "2.0", "id": req["id"], "result": answers[req["method"]]}
    else:
        out = {"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "method not found"}}
    print(json.dumps(out), flush=True)
`), 0o644) //nolint:errcheck
	fake := filepath.Join(dir, "python")
	os.WriteFile(fake, []byte("#!/bin/sh\nif [ \"$1\" = -c ]; then echo 3.14.0; echo 0.30.0; echo gateway; exit 0; fi\nexec "+py+" "+gateway+"\n"), 0o755) //nolint:errcheck
	for _, c := range []struct {
		name, answers, word string
	}{
		{"dialect B without approval requests", `{"client.capabilities": {"server_requests": ["clarify"]}}`, "no approval requests"},
		{"no prompt.submit", `{}`, "has no prompt.submit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pe := readyError(t, hermes.Options{Python: fake, Env: []string{"FAKE_ANSWERS=" + c.answers}, StartTimeout: testwait.Timeout})
			if pe.Condition() != protocol.CondAgentIncompatible {
				t.Fatalf("condition %s: %v", pe.Condition(), pe)
			}
			for _, w := range []string{"0.30.0", "0.19.0", "0.22", c.word} {
				if !strings.Contains(pe.Message, w) {
					t.Errorf("message %q lacks %q", pe.Message, w)
				}
			}
		})
	}
}
