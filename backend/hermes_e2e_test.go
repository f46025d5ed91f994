package backend_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/turn"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The end-to-end suite of record for the Hermes runtime: the real backend.Service,
// the real sidecar process (this test binary), the real SQLite store and each real
// Hermes Agent install (hermestest: 0.19.0, dialect A; the newest, dialect B), with
// only the model scripted. One Hermes sidecar (one gateway) serves every subtest of an
// install: a Hermes start costs seconds.

const hermesTurnTimeout = 90 * time.Second

type hermesRig struct {
	*harness
	in        hermestest.Install
	home      hermestest.Home
	ws        string
	runtimeID string
}

func newHermesRig(t *testing.T, in hermestest.Install) *hermesRig {
	h := newHarnessWith(t, "", func(o *backend.Options) { o.ApprovalTimeout = 30 * time.Second })
	home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: h.provider.BaseURL(),
		Extra: map[string]any{"approvals": map[string]any{"mode": "manual", "timeout": 8}}})
	var env []string
	for _, e := range home.Env {
		if !strings.HasPrefix(e, "HERMES_HOME=") {
			env = append(env, e)
		}
	}
	h.svc.RegisterHermes(backend.HermesConfig{Python: in.Python, Prefix: in.Prefix, Home: home.Dir, Env: env})
	ws := h.withWorkspace()
	ctx := context.Background()
	if err := h.svc.SetDefaultRuntime(ctx, "hermes"); err != nil {
		t.Fatalf("SetDefaultRuntime(hermes): %v", err)
	}
	return &hermesRig{harness: h, in: in, home: home, ws: ws, runtimeID: "hermes"}
}

// waitEndLong is waitEnd with a Hermes-sized timeout.
func (r *hermesRig) waitEndLong(stream string) []turn.Frame {
	r.t.Helper()
	r.mu.Lock()
	ch := r.endedCh(stream)
	r.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(hermesTurnTimeout):
		r.t.Fatalf("stream %s did not end; frames so far:\n%s", stream, r.describe(stream))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]turn.Frame(nil), r.frames[stream]...)
}

// waitFrame waits for a frame of event on stream and returns its data.
func (r *hermesRig) waitFrame(stream, event string) map[string]any {
	r.t.Helper()
	deadline := time.Now().Add(hermesTurnTimeout)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, f := range r.frames[stream] {
			if f.Event == event {
				r.mu.Unlock()
				var m map[string]any
				json.Unmarshal(f.Data, &m) //nolint:errcheck
				return m
			}
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	r.t.Fatalf("no %s frame on %s:\n%s", event, stream, r.describe(stream))
	return nil
}

func hasEvent(frames []turn.Frame, event string) bool {
	for _, f := range frames {
		if f.Event == event {
			return true
		}
	}
	return false
}

func TestHermesEndToEnd(t *testing.T) {
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			start := time.Now()
			r := newHermesRig(t, in)
			ctx := context.Background()
			defer func() { t.Logf("Hermes %s (%s, dialect %s): suite took %s", in.Version, in.Name, in.Dialect, time.Since(start).Round(time.Millisecond)) }()

			sid := r.newSession()
			t.Run("streamed text and reasoning, usage, agent session", func(t *testing.T) {
				r.provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Reasoning: "Weighing it. "}, {Text: "Hello "}, {Text: "from Hermes."}},
					Usage: &providertest.Usage{PromptTokens: 200, CompletionTokens: 11}})
				stream := r.start(sid, "hello")
				frames := r.waitEndLong(stream)
				r.checkFrames(stream, frames, protocol.EvDone)
				if got := textOf(frames, "token"); got != "Hello from Hermes." {
					t.Errorf("tokens %q", got)
				}
				if got := textOf(frames, "reasoning"); got != "Weighing it. " {
					t.Errorf("reasoning %q", got)
				}
				done := framesOf(frames, protocol.EvDone)[0]
				usage, _ := done["usage"].(map[string]any)
				if usage["input_tokens"] != float64(200) || usage["output_tokens"] != float64(11) {
					t.Errorf("done usage %v", usage)
				}
				sess, _ := r.svc.GetSession(ctx, sid)
				if sess.Session.AgentSessionID == "" || sess.Session.Runtime != "hermes" {
					t.Fatalf("session %+v: no Hermes session stored", sess.Session)
				}
				msgs := r.messages(sid)
				if last := msgs[len(msgs)-1]; last.Role != "assistant" || last.Content != "Hello from Hermes." || strings.TrimSpace(last.Reasoning) != "Weighing it." {
					t.Errorf("saved answer %+v", last)
				}
			})

			t.Run("approval allowed once runs the command", func(t *testing.T) {
				marker := filepath.Join(r.ws, "allowed-dir")
				os.MkdirAll(marker, 0o755) //nolint:errcheck
				r.provider.Enqueue(providertest.CallTurn("", providertest.Call("a1", "terminal", map[string]any{"command": "rm -rf " + marker + " && echo gone"})),
					providertest.TextTurn("Deleted."))
				stream := r.start(sid, "delete the folder")
				ap := r.waitFrame(stream, "approval")
				choices, _ := ap["choices"].([]any)
				if len(choices) != 4 {
					t.Errorf("approval choices %v", ap["choices"])
				}
				if err := r.svc.RespondApproval(ctx, sid, ap["approval_id"].(string), "once"); err != nil {
					t.Fatalf("RespondApproval: %v", err)
				}
				frames := r.waitEndLong(stream)
				r.checkFrames(stream, frames, protocol.EvDone)
				if _, err := os.Stat(marker); !os.IsNotExist(err) {
					t.Errorf("the allowed command did not run: %v", err)
				}
				res := framesOf(frames, "approval_resolved")
				if len(res) != 1 || res[0]["reason"] != "answered" {
					t.Errorf("approval_resolved %v", res)
				}
			})

			t.Run("approval denied does not run it", func(t *testing.T) {
				marker := filepath.Join(r.ws, "denied-dir")
				os.MkdirAll(marker, 0o755) //nolint:errcheck
				r.provider.Enqueue(providertest.CallTurn("", providertest.Call("d1", "terminal", map[string]any{"command": "rm -rf " + marker})),
					providertest.TextTurn("Not deleted."))
				stream := r.start(sid, "delete the other folder")
				ap := r.waitFrame(stream, "approval")
				if err := r.svc.RespondApproval(ctx, sid, ap["approval_id"].(string), "deny"); err != nil {
					t.Fatalf("RespondApproval: %v", err)
				}
				frames := r.waitEndLong(stream)
				r.checkFrames(stream, frames, protocol.EvDone)
				if _, err := os.Stat(marker); err != nil {
					t.Errorf("the denied command ran: %v", err)
				}
			})

			t.Run("an expired approval is denied", func(t *testing.T) {
				marker := filepath.Join(r.ws, "expired-dir")
				os.MkdirAll(marker, 0o755) //nolint:errcheck
				r.provider.Enqueue(providertest.CallTurn("", providertest.Call("e1", "terminal", map[string]any{"command": "rm -rf " + marker})),
					providertest.TextTurn("It timed out."))
				stream := r.start(sid, "delete a third folder")
				ap := r.waitFrame(stream, "approval")
				if ap["timeout_s"] != float64(8) {
					t.Errorf("timeout_s %v, want Hermes's approvals.timeout 8", ap["timeout_s"])
				}
				frames := r.waitEndLong(stream)
				r.checkFrames(stream, frames, protocol.EvDone)
				if _, err := os.Stat(marker); err != nil {
					t.Errorf("the expired command ran: %v", err)
				}
				res := framesOf(frames, "approval_resolved")
				if len(res) != 1 || res[0]["reason"] != "timeout" {
					t.Errorf("approval_resolved %v", res)
				}
			})

			t.Run("clarify", func(t *testing.T) {
				args := map[string]any{"question": "Which colour?", "choices": []string{"red", "blue"}}
				if in.Dialect == "B" {
					args = map[string]any{"questions": []map[string]any{{"question": "Which colour?", "choices": []string{"red", "blue"}}}}
				}
				r.provider.Enqueue(providertest.CallTurn("", providertest.Call("q1", "clarify", args)), providertest.TextTurn("Blue it is."))
				stream := r.start(sid, "paint it")
				cl := r.waitFrame(stream, "clarify")
				if cl["question"] != "Which colour?" {
					t.Errorf("clarify %v", cl)
				}
				if err := r.svc.RespondClarify(ctx, sid, cl["clarify_id"].(string), []any{"blue"}); err != nil {
					t.Fatalf("RespondClarify: %v", err)
				}
				frames := r.waitEndLong(stream)
				r.checkFrames(stream, frames, protocol.EvDone)
				reqs := r.provider.Requests()
				if tm := toolMessages(reqs, len(reqs)-1); len(tm) == 0 || !strings.Contains(strings.Join(tm, " "), "blue") {
					t.Errorf("the model did not read the answer: %v", tm)
				}
			})

			t.Run("a second session runs concurrently without mixing frames", func(t *testing.T) {
				other := r.newSession()
				// Echo answers ("You said: ...") make each session's answer its own.
				s1 := r.start(sid, "alpha one")
				s2 := r.start(other, "beta two")
				f1, f2 := r.waitEndLong(s1), r.waitEndLong(s2)
				r.checkFrames(s1, f1, protocol.EvDone)
				r.checkFrames(s2, f2, protocol.EvDone)
				if a, b := textOf(f1, "token"), textOf(f2, "token"); !strings.Contains(a, "alpha one") || strings.Contains(a, "beta") ||
					!strings.Contains(b, "beta two") || strings.Contains(b, "alpha") {
					t.Errorf("mixed answers: %q / %q", a, b)
				}
			})

			t.Run("the sidecar killed, the next turn resumes the same Hermes session", func(t *testing.T) {
				before, _ := r.svc.GetSession(ctx, sid)
				st, ok := statusOf(r.svc, r.runtimeID)
				if !ok || st.PID == 0 {
					t.Fatalf("no running Hermes sidecar: %+v", st)
				}
				if err := killProcess(st.PID); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(hermesTurnTimeout)
				for {
					if s2, ok := statusOf(r.svc, r.runtimeID); ok && s2.State == "ready" && s2.PID != st.PID {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the Hermes sidecar did not come back")
					}
					time.Sleep(50 * time.Millisecond)
				}
				r.provider.Enqueue(providertest.TextTurn("Still here."))
				stream := r.start(sid, "are you there")
				frames := r.waitEndLong(stream)
				r.checkFrames(stream, frames, protocol.EvDone)
				after, _ := r.svc.GetSession(ctx, sid)
				if after.Session.AgentSessionID != before.Session.AgentSessionID {
					t.Errorf("agent session %q after the restart, want %q", after.Session.AgentSessionID, before.Session.AgentSessionID)
				}
				reqs := r.provider.Requests()
				if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "Hello from Hermes.") {
					t.Errorf("the resumed turn's request lacks the earlier conversation")
				}
				if n := strings.Count(string(reqs[len(reqs)-1].Body), "Hello from Hermes."); n != 1 {
					t.Errorf("the earlier answer appears %d times in the request (history re-sent?)", n)
				}
			})

			t.Run("stop mid-stream keeps the partial text", func(t *testing.T) {
				gate := make(chan struct{})
				r.provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Partial answer"}, {Text: " never sent", Wait: gate}}})
				stream := r.start(sid, "write a long story")
				deadline := time.Now().Add(hermesTurnTimeout)
				for !strings.Contains(textOf(r.snapshot(stream), "token"), "Partial answer") {
					if time.Now().After(deadline) {
						t.Fatalf("no partial text: %s", r.describe(stream))
					}
					time.Sleep(10 * time.Millisecond)
				}
				t0 := time.Now()
				if err := r.svc.Cancel(stream); err != nil {
					t.Fatal(err)
				}
				frames := r.waitEndLong(stream)
				if d := time.Since(t0); d > 3*time.Second {
					t.Errorf("stop took %s", d)
				}
				close(gate)
				r.checkFrames(stream, frames, protocol.EvCancel)
				// The partial row, then the host's cancelled marker.
				msgs := r.messages(sid)
				if len(msgs) < 2 || msgs[len(msgs)-1].Kind != "cancelled" {
					t.Fatalf("rows %+v", msgs)
				}
				if kept := msgs[len(msgs)-2]; kept.Role != "assistant" || !strings.Contains(kept.Content, "Partial answer") || strings.Contains(kept.Content, "never sent") {
					t.Errorf("kept %+v", kept)
				}
			})

		})
	}
}
