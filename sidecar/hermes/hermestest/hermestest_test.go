package hermestest_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/providertest"
)

// TestInstallsAnswerThroughTheScriptedProvider starts each real Hermes's gateway with a
// home from NewHome and checks that one prompt reaches the scripted provider and its
// answer comes back: the helper's whole promise.
func TestInstallsAnswerThroughTheScriptedProvider(t *testing.T) {
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			if in.Version == "" || in.Package == "" || in.SitePackages == "" {
				t.Fatalf("incomplete install: %+v", in)
			}
			p := providertest.Start()
			defer p.Close()
			p.Enqueue(providertest.TextTurn("scripted answer"))
			home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: p.BaseURL()})
			for _, f := range []string{"config.yaml", ".update_check"} {
				if _, err := os.Stat(home.Dir + "/" + f); err != nil {
					t.Fatal(err)
				}
			}
			argv := in.GatewayCommand()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), home.Env...)
			cmd.Dir = t.TempDir()
			stderr := &lockedBuilder{} // written by exec's copying goroutine while the test reads it
			cmd.Stderr = stderr
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				// Hermes exits at stdin EOF once it has flushed its sessions: a figure
				// (seconds on a loaded machine; the runtime's drain does not wait for it,
				// it kills the group at 4 s), and an error only for a gateway that hangs
				// (the tests' deadline).
				t0 := time.Now()
				stdin.Close()
				done := make(chan struct{})
				go func() { cmd.Wait(); close(done) }() //nolint:errcheck // exit status is not the point
				select {
				case <-done:
					t.Logf("the gateway exited %s after stdin EOF", time.Since(t0).Round(time.Millisecond))
				case <-time.After(testwait.Timeout):
					cmd.Process.Kill() //nolint:errcheck
					t.Errorf("gateway did not exit within %v of stdin EOF", testwait.Timeout)
				}
			}()
			lines := make(chan map[string]any, 256)
			go func() {
				sc := bufio.NewScanner(stdout)
				sc.Buffer(make([]byte, 1<<20), 16<<20)
				for sc.Scan() {
					var m map[string]any
					if json.Unmarshal(sc.Bytes(), &m) == nil {
						lines <- m
					}
				}
				close(lines)
			}()
			send := func(id int, method string, params map[string]any) {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
				if _, err := stdin.Write(append(b, '\n')); err != nil {
					t.Fatal(err)
				}
			}
			await := func(what string, pred func(map[string]any) bool) map[string]any {
				t.Helper()
				deadline := time.NewTimer(testwait.Timeout)
				defer deadline.Stop()
				for {
					select {
					case m, ok := <-lines:
						if !ok {
							t.Fatalf("gateway closed stdout before %s; stderr:\n%s", what, stderr.String())
						}
						if pred(m) {
							return m
						}
					case <-deadline.C:
						t.Fatalf("no %s within %v; stderr:\n%s", what, testwait.Timeout, stderr.String())
					}
				}
			}
			event := func(name string) func(map[string]any) bool {
				return func(m map[string]any) bool {
					p, _ := m["params"].(map[string]any)
					return m["method"] == "event" && p != nil && p["type"] == name
				}
			}
			reply := func(id float64) func(map[string]any) bool {
				return func(m map[string]any) bool { return m["id"] == id && m["method"] == nil }
			}
			await("gateway.ready", event("gateway.ready"))
			send(1, "session.create", map[string]any{"cwd": cmd.Dir})
			created := await("session.create reply", reply(1))
			res, _ := created["result"].(map[string]any)
			sid, _ := res["session_id"].(string)
			if sid == "" {
				t.Fatalf("session.create: %v", created)
			}
			send(2, "prompt.submit", map[string]any{"session_id": sid, "text": "hello"})
			done := await("message.complete", event("message.complete"))
			payload := done["params"].(map[string]any)["payload"].(map[string]any)
			if payload["text"] != "scripted answer" {
				t.Fatalf("message.complete text %q, want the scripted answer", payload["text"])
			}
			reqs := p.Requests()
			if len(reqs) == 0 || !reqs[0].Stream || reqs[0].Model != "scripted-model" {
				t.Fatalf("provider requests: %+v", reqs)
			}
			if got := reqs[0].Authorization; got != "Bearer no-key-required" {
				t.Errorf("Authorization %q", got)
			}
		})
	}
}

// lockedBuilder is a strings.Builder safe for one writer and one reader at a time.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
