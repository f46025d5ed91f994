package stderrtail

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// Shapes of what real agents print when they die: a Rust panic with a backtrace (as
// codex and goose print it), a Python traceback (Hermes), a Go panic, a Node error, an
// agent whose last lines are its INFO log.
func TestTelling(t *testing.T) {
	cases := []struct {
		name string
		in   string
		n    int
		want []string
	}{{
		name: "a Rust panic: its first line, not the backtrace frames under it",
		in: `2026-12-03T10:00:00.000Z INFO codex_acp: starting
thread 'main' panicked at src/config.rs:88:14:
could not read config.toml: Permission denied (os error 13)
stack backtrace:
   0: rust_begin_unwind
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:665:5
   1: core::panicking::panic_fmt
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/panicking.rs:74:14
   2: codex_acp::config::load
note: run with ` + "`RUST_BACKTRACE=full`" + ` for a verbose backtrace.`,
		n:    3,
		want: []string{"thread 'main' panicked at src/config.rs:88:14:", "could not read config.toml: Permission denied (os error 13)"},
	}, {
		name: "a Python traceback: the exception's own line",
		in: `Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/hermes/cli.py", line 12, in main
    run()
  File "/usr/lib/python3.11/site-packages/hermes/run.py", line 40, in run
    raise ValueError("no model configured")
ValueError: no model configured`,
		n:    3,
		want: []string{"ValueError: no model configured"},
	}, {
		name: "a Go panic",
		in: `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]

goroutine 1 [running]:
main.(*agent).start(0x0)
	/src/agent/main.go:41 +0x2c
main.main()
	/src/agent/main.go:12 +0x1d
exit status 2`,
		n:    3,
		want: []string{"panic: runtime error: invalid memory address or nil pointer dereference", "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]", "exit status 2"},
	}, {
		name: "a Node error",
		in: `Error: Cannot find module 'opencode-linux-x64'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1145:15)
    at Module._load (node:internal/modules/cjs/loader:986:27)
Node.js v20.20.2`,
		n:    3,
		want: []string{"Error: Cannot find module 'opencode-linux-x64'", "Node.js v20.20.2"},
	}, {
		name: "INFO log lines after the error are left out",
		in: `ERROR failed to bind 127.0.0.1:4096: address in use
INFO shutting down
INFO flushed 0 sessions
[info] bye`,
		n:    3,
		want: []string{"ERROR failed to bind 127.0.0.1:4096: address in use"},
	}, {
		name: "many errors: the first (the cause) and the last",
		in:   "error: a\nerror: b\nerror: c\nerror: d\nerror: e",
		n:    3,
		want: []string{"error: a", "error: d", "error: e"},
	}, {
		name: "no error line: the last lines that are not log noise",
		in:   "usage: agent [--stdio]\nunknown flag --acp\n\n",
		n:    3,
		want: []string{"usage: agent [--stdio]", "unknown flag --acp"},
	}, {
		name: "only log lines: the last ones rather than nothing",
		in:   "INFO a\nINFO b",
		n:    1,
		want: []string{"INFO b"},
	}, {
		name: "a message that says info is not a log line",
		in:   "Error: cannot read the info file ~/.agent/info.json",
		n:    3,
		want: []string{"Error: cannot read the info file ~/.agent/info.json"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := TellingText(c.in, c.n); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestTellingRealProcess: the stderr of a real Python process dying of an exception
// (Hermes is Python; the machine's python3 runs it), read as the runtimes read it.
func TestTellingRealProcess(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is not on PATH (%v): scripts/setup.sh installs Python for the Hermes tests", err)
	}
	cmd := exec.Command(py, "-c", `
import logging, sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s INFO %(message)s")
logging.info("gateway starting")
def load():
    raise FileNotFoundError(2, "No such file or directory", "/home/u/.hermes/config.yaml")
load()`)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("the process did not fail")
	}
	got := TellingText(string(out), 3)
	if len(got) != 1 || !strings.HasPrefix(got[0], "FileNotFoundError: [Errno 2] No such file or directory") {
		t.Fatalf("chose %q from:\n%s", got, out)
	}
}
