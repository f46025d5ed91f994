//go:build linux

package backend_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/bus"
	"talaria/backend/turn"
	"talaria/internal/testwait"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The end-to-end suite of record for the Hermes runtime: the real backend.Service,
// the real sidecar process (this test binary), the real SQLite store and each real
// Hermes Agent install (hermestest: 0.19.0, dialect A; the newest, dialect B), with
// only the model scripted. One Hermes sidecar (one gateway) serves every subtest of an
// install: a Hermes start costs seconds.

type hermesRig struct {
	*backendtest.Harness
	in        hermestest.Install
	home      hermestest.Home
	cfg       hermestest.Config
	ws        string
	runtimeID string

	// sig is closed (and replaced) at every bus event: the rig's waits wake on what
	// happens, with a deadline, instead of sleeping. seen is the rig's own copy of the
	// frames, written by the same subscriber before it signals, so a wait that read
	// the state before taking the signal cannot miss the last frame.
	smu     sync.Mutex
	sig     chan struct{}
	seen    map[string][]turn.Frame
	streams []string // every stream a subtest started (ended on a failure)
}

func newHermesRig(t *testing.T, in hermestest.Install) *hermesRig {
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.ApprovalTimeout = testwait.Timeout })
	// Hermes's own titles are on (its auxiliary title call is a non-streaming request,
	// answered from the provider's auxiliary queue so it never takes a chat's turn);
	// approvals wait as long as any test waits (hermesApprovalTimeoutS: an approval the
	// test answers is never expired by a stalled machine; the expiry subtest shortens
	// it for itself); the skills toolset brings skill_view, whose skill below asks for
	// a secret.
	h.Provider.SplitAux(true)
	cfg := hermestest.Config{BaseURL: h.Provider.BaseURL(),
		Toolsets: "terminal,file,clarify,todo,skills",
		Extra: map[string]any{"approvals": map[string]any{"mode": "manual", "timeout": hermesApprovalTimeoutS},
			"auxiliary": map[string]any{"title_generation": map[string]any{"enabled": true}}}}
	home := hermestest.NewHome(t, in, cfg)
	skill := filepath.Join(home.Dir, "skills", "canary-skill")
	if err := os.MkdirAll(skill, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: canary-skill\ndescription: Checks the canary token.\n"+
		"required_environment_variables:\n  - name: CANARY_TOKEN\n    prompt: Paste the canary token\n---\nRun the check with $CANARY_TOKEN.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, e := range home.Env {
		if !strings.HasPrefix(e, "HERMES_HOME=") {
			env = append(env, e)
		}
	}
	// The gateway's traffic, for a failure's story and for recording fixtures
	// (HERMES_FIXTURES=DIR keeps it there); never in the data folder the canary
	// search reads (it is raw, secrets included).
	trace := filepath.Join(t.TempDir(), "gateway-"+in.Name+".ndjson")
	env = append(env, "TALARIA_HERMES_TRACE="+trace)
	t.Cleanup(func() {
		if dir := os.Getenv("HERMES_FIXTURES"); dir != "" {
			if b, err := os.ReadFile(trace); err == nil {
				os.WriteFile(filepath.Join(dir, "e2e-"+in.Name+".trace"), b, 0o644) //nolint:errcheck
			}
		}
		if t.Failed() {
			if b, err := os.ReadFile(trace); err == nil {
				lines := strings.Split(string(b), "\n")
				if len(lines) > 400 {
					lines = lines[len(lines)-400:]
				}
				t.Logf("gateway traffic (last %d lines):\n%s", len(lines), strings.Join(lines, "\n"))
			}
		}
	})
	r := &hermesRig{Harness: h, in: in, home: home, cfg: cfg, runtimeID: "hermes", sig: make(chan struct{}), seen: map[string][]turn.Frame{}}
	t.Cleanup(h.Svc.Bus.Subscribe(func(ev bus.Event) {
		r.smu.Lock()
		if f, ok := ev.Payload.(turn.Frame); ok {
			r.seen[f.StreamID] = append(r.seen[f.StreamID], f)
		}
		close(r.sig)
		r.sig = make(chan struct{})
		r.smu.Unlock()
	}))
	h.Svc.Agents().RegisterHermes(backend.HermesConfig{Python: in.Python, Prefix: in.Prefix, Home: home.Dir, Env: env})
	r.ws = h.WithWorkspace()
	if err := h.Svc.Agents().SetDefaultRuntime(context.Background(), "hermes"); err != nil {
		t.Fatalf("SetDefaultRuntime(hermes): %v", err)
	}
	return r
}

// hermesApprovalTimeoutS is the rig's Hermes approvals.timeout: the shared deadline.
var hermesApprovalTimeoutS = int(testwait.Timeout / time.Second)

// setApprovalTimeout rewrites the home's config.yaml with approvals.timeout seconds.
// Hermes reads that setting from the file at each approval (its config cache is keyed
// on the file's mtime and size); the sidecar read it once, at the gateway's start, for
// the cards' timeout_s.
func (r *hermesRig) setApprovalTimeout(seconds int) {
	r.T.Helper()
	r.cfg.Extra["approvals"] = map[string]any{"mode": "manual", "timeout": seconds}
	if _, err := hermestest.WriteHome(r.home.Dir, r.in, r.cfg); err != nil {
		r.T.Fatalf("rewriting Hermes's config: %v", err)
	}
}

// run runs one subtest whose rig helpers fail that subtest, never its parent (a
// FailNow on the parent from a subtest panics and ends every later subtest). A failed
// subtest's streams are stopped before the next one starts, so one failure does not
// leave the chat busy for the rest.
func (r *hermesRig) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		parent := r.Harness.T
		r.Harness.T = t
		r.smu.Lock()
		r.streams = nil
		r.smu.Unlock()
		defer func() {
			r.Harness.T = parent
			if !t.Failed() {
				return
			}
			r.smu.Lock()
			streams := r.streams
			r.smu.Unlock()
			for _, st := range streams {
				r.Svc.Turns().Cancel(st) //nolint:errcheck // an ended stream has nothing to stop
				ch := r.EndedCh(st)
				if !backendtest.WaitClosed(ch) {
					t.Logf("stream %s did not end after its subtest failed", st)
				}
			}
		}()
		f(t)
	})
}

// start starts a turn and remembers its stream for run's clean-up.
func (r *hermesRig) Start(session, text string) string {
	st := r.Harness.Start(session, text)
	r.smu.Lock()
	r.streams = append(r.streams, st)
	r.smu.Unlock()
	return st
}

// await waits until cond holds, re-checking it at every bus event (frames, status
// changes, sessions changed) and at least every 250 ms (for state no event reports:
// the provider's requests, Hermes's own session list), failing the subtest with
// what it waited for when the shared deadline (testwait.Timeout) passes first.
func (r *hermesRig) await(what string, cond func() bool) {
	r.T.Helper()
	deadline := time.NewTimer(testwait.Timeout)
	defer deadline.Stop()
	for {
		r.smu.Lock()
		ch := r.sig
		r.smu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-time.After(250 * time.Millisecond):
		case <-deadline.C:
			r.T.Fatalf("waited %s for %s", testwait.Timeout, what)
		}
	}
}

// framesSeen is the stream's frames so far, as the rig's subscriber got them.
func (r *hermesRig) framesSeen(stream string) []turn.Frame {
	r.smu.Lock()
	defer r.smu.Unlock()
	return append([]turn.Frame(nil), r.seen[stream]...)
}

// waitEndLong waits for the stream's stream_end (the harness's channel, closed by
// that frame) and returns its frames.
func (r *hermesRig) waitEndLong(stream string) []turn.Frame {
	r.T.Helper()
	ch := r.EndedCh(stream)
	if !backendtest.WaitClosed(ch) {
		r.T.Fatalf("stream %s did not end within %s; frames so far:\n%s", stream, testwait.Timeout, r.Describe(stream))
	}
	return r.Snapshot(stream)
}

// waitFrame waits for a frame of event on stream and returns its data.
func (r *hermesRig) waitFrame(stream, event string) map[string]any {
	r.T.Helper()
	var m map[string]any
	r.await(event+" frame on stream "+stream, func() bool {
		for _, f := range r.framesSeen(stream) {
			if f.Event == event {
				json.Unmarshal(f.Data, &m) //nolint:errcheck
				return true
			}
		}
		return false
	})
	return m
}

// waitText waits until the stream's tokens hold text.
func (r *hermesRig) WaitText(stream, text string) {
	r.T.Helper()
	r.await(fmt.Sprintf("the text %q on stream %s", text, stream), func() bool {
		return strings.Contains(backendtest.TextOf(r.framesSeen(stream), "token"), text)
	})
}

// waitTitle waits until the chat's title is want.
func (r *hermesRig) WaitTitle(sid, want string) {
	r.T.Helper()
	r.await(fmt.Sprintf("the chat's title %q", want), func() bool {
		v, err := r.Svc.Chats().GetSession(context.Background(), sid)
		return err == nil && v.Session.Title == want
	})
}

func TestHermesEndToEnd(t *testing.T) {
	// Each install has its own provider, data folder, Hermes home and gateway, and a
	// run spends most of its time waiting on Hermes (a Python process): the installs,
	// and this test beside the package's other parallel ones, run at the same time.
	t.Parallel()
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := newHermesRig(t, in)
			ctx := context.Background()
			defer func() {
				t.Logf("Hermes %s (%s, dialect %s): suite took %s", in.Version, in.Name, in.Dialect, time.Since(start).Round(time.Millisecond))
			}()

			sid := r.NewSession()
			r.run(t, "streamed text and reasoning, usage, agent session, Hermes's title", func(t *testing.T) {
				r.Provider.EnqueueAux(providertest.TextTurn("Greeting Hermes Politely"))
				r.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Reasoning: "Weighing it. "}, {Text: "Hello "}, {Text: "from Hermes."}},
					Usage: &providertest.Usage{PromptTokens: 200, CompletionTokens: 11}})
				stream := r.Start(sid, "hello")
				frames := r.waitEndLong(stream)
				r.CheckFrames(stream, frames, protocol.EvDone)
				if got := backendtest.TextOf(frames, "token"); got != "Hello from Hermes." {
					t.Errorf("tokens %q", got)
				}
				if got := backendtest.TextOf(frames, "reasoning"); got != "Weighing it. " {
					t.Errorf("reasoning %q", got)
				}
				done := backendtest.FramesOf(frames, protocol.EvDone)[0]
				usage, _ := done["usage"].(map[string]any)
				if usage["input_tokens"] != float64(200) || usage["output_tokens"] != float64(11) {
					t.Errorf("done usage %v", usage)
				}
				sess, _ := r.Svc.Chats().GetSession(ctx, sid)
				if sess.Session.AgentSessionID == "" || sess.Session.Runtime != "hermes" {
					t.Fatalf("session %+v: no Hermes session stored", sess.Session)
				}
				msgs := r.Messages(sid)
				if last := msgs[len(msgs)-1]; last.Role != "assistant" || last.Content != "Hello from Hermes." || strings.TrimSpace(last.Reasoning) != "Weighing it." {
					t.Errorf("saved answer %+v", last)
				}
				// Hermes names the chat itself, after the turn (a $/session_event) or
				// during it (an agent_title frame).
				r.WaitTitle(sid, "Greeting Hermes Politely")
			})

			r.run(t, "a user's rename is never overwritten by Hermes's title", func(t *testing.T) {
				// The user renames the chat while Hermes is naming it (its title call held
				// at the provider): Hermes's late title reaches Talaria after the turn
				// ($/session_event) and again at the next turn's start (session.info, an
				// agent_title frame); neither may replace the user's name.
				other := r.NewSession()
				gate, open := backendtest.Release()
				defer open()
				r.Provider.EnqueueAux(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Hermes Would Call It This", Wait: gate}}})
				before := len(r.Provider.Requests())
				stream := r.Start(other, "hi again")
				r.CheckFrames(stream, r.waitEndLong(stream), protocol.EvDone)
				r.await("Hermes's title request", func() bool {
					for _, q := range r.Provider.Requests()[before:] {
						if !q.Stream {
							return true
						}
					}
					return false
				})
				if _, err := r.Svc.Chats().RenameSession(ctx, other, "My own name"); err != nil {
					t.Fatal(err)
				}
				open()
				v, _ := r.Svc.Chats().GetSession(ctx, other)
				agentID := v.Session.AgentSessionID
				// Hermes stores its title, then sends session.title.
				r.await("Hermes's own title in its session list", func() bool {
					list, err := r.Svc.Agents().HermesSessions(ctx, r.runtimeID)
					for _, hs := range list {
						if err == nil && hs.AgentSessionID == agentID && hs.Title == "Hermes Would Call It This" {
							return true
						}
					}
					return false
				})
				next := r.Start(other, "and again")
				r.CheckFrames(next, r.waitEndLong(next), protocol.EvDone)
				if v, _ := r.Svc.Chats().GetSession(ctx, other); v.Session.Title != "My own name" || !v.Session.TitleManual {
					t.Errorf("title %q (manual %v) after Hermes named the chat", v.Session.Title, v.Session.TitleManual)
				}
			})

			r.run(t, "approval allowed once runs the command", func(t *testing.T) {
				marker := filepath.Join(r.ws, "allowed-dir")
				os.MkdirAll(marker, 0o755) //nolint:errcheck
				r.Provider.Enqueue(providertest.CallTurn("", providertest.Call("a1", "terminal", map[string]any{"command": "rm -rf " + marker + " && echo gone"})),
					providertest.TextTurn("Deleted."))
				stream := r.Start(sid, "delete the folder")
				ap := r.waitFrame(stream, "approval")
				choices, _ := ap["choices"].([]any)
				if len(choices) != 4 {
					t.Errorf("approval choices %v", ap["choices"])
				}
				if ap["timeout_s"] != float64(hermesApprovalTimeoutS) {
					t.Errorf("timeout_s %v, want Hermes's approvals.timeout %d", ap["timeout_s"], hermesApprovalTimeoutS)
				}
				if err := r.Svc.Approvals().RespondApproval(ctx, sid, ap["approval_id"].(string), "once"); err != nil {
					t.Fatalf("RespondApproval: %v", err)
				}
				frames := r.waitEndLong(stream)
				r.CheckFrames(stream, frames, protocol.EvDone)
				if _, err := os.Stat(marker); !os.IsNotExist(err) {
					t.Errorf("the allowed command did not run: %v", err)
				}
				res := backendtest.FramesOf(frames, "approval_resolved")
				if len(res) != 1 || res[0]["reason"] != "answered" {
					t.Errorf("approval_resolved %v", res)
				}
			})

			r.run(t, "approval denied does not run it", func(t *testing.T) {
				marker := filepath.Join(r.ws, "denied-dir")
				os.MkdirAll(marker, 0o755) //nolint:errcheck
				r.Provider.Enqueue(providertest.CallTurn("", providertest.Call("d1", "terminal", map[string]any{"command": "rm -rf " + marker})),
					providertest.TextTurn("Not deleted."))
				stream := r.Start(sid, "delete the other folder")
				ap := r.waitFrame(stream, "approval")
				if err := r.Svc.Approvals().RespondApproval(ctx, sid, ap["approval_id"].(string), "deny"); err != nil {
					t.Fatalf("RespondApproval: %v", err)
				}
				frames := r.waitEndLong(stream)
				r.CheckFrames(stream, frames, protocol.EvDone)
				if _, err := os.Stat(marker); err != nil {
					t.Errorf("the denied command ran: %v", err)
				}
			})

			r.run(t, "an expired approval is denied", func(t *testing.T) {
				// Hermes's own clock expires the approval: 1 s for this subtest (nothing
				// answers it, so a slow machine only makes the wait longer).
				r.setApprovalTimeout(1)
				defer r.setApprovalTimeout(hermesApprovalTimeoutS)
				marker := filepath.Join(r.ws, "expired-dir")
				os.MkdirAll(marker, 0o755) //nolint:errcheck
				r.Provider.Enqueue(providertest.CallTurn("", providertest.Call("e1", "terminal", map[string]any{"command": "rm -rf " + marker})),
					providertest.TextTurn("It timed out."))
				stream := r.Start(sid, "delete a third folder")
				r.waitFrame(stream, "approval")
				frames := r.waitEndLong(stream)
				r.CheckFrames(stream, frames, protocol.EvDone)
				if _, err := os.Stat(marker); err != nil {
					t.Errorf("the expired command ran: %v", err)
				}
				res := backendtest.FramesOf(frames, "approval_resolved")
				if len(res) != 1 || res[0]["reason"] != "timeout" {
					t.Errorf("approval_resolved %v", res)
				}
			})

			r.run(t, "clarify", func(t *testing.T) {
				args := map[string]any{"question": "Which colour?", "choices": []string{"red", "blue"}}
				if in.Dialect == "B" {
					args = map[string]any{"questions": []map[string]any{{"question": "Which colour?", "choices": []string{"red", "blue"}}}}
				}
				r.Provider.Enqueue(providertest.CallTurn("", providertest.Call("q1", "clarify", args)), providertest.TextTurn("Blue it is."))
				stream := r.Start(sid, "paint it")
				cl := r.waitFrame(stream, "clarify")
				if cl["question"] != "Which colour?" {
					t.Errorf("clarify %v", cl)
				}
				if err := r.Svc.Approvals().RespondClarify(ctx, sid, cl["clarify_id"].(string), []any{"blue"}); err != nil {
					t.Fatalf("RespondClarify: %v", err)
				}
				frames := r.waitEndLong(stream)
				r.CheckFrames(stream, frames, protocol.EvDone)
				if tm := toolResults(lastChat(r.Provider.Requests())); len(tm) == 0 || !strings.Contains(strings.Join(tm, " "), "blue") {
					t.Errorf("the model did not read the answer: %v", tm)
				}
			})

			if in.Dialect == "B" {
				r.run(t, "clarify with several questions and a multi-select one", func(t *testing.T) {
					args := map[string]any{"questions": []map[string]any{
						{"question": "Which colours?", "choices": []string{"red", "green", "blue"}, "multi_select": true},
						{"question": "How many coats?"}}}
					r.Provider.Enqueue(providertest.CallTurn("", providertest.Call("q2", "clarify", args)), providertest.TextTurn("Noted."))
					stream := r.Start(sid, "paint it again")
					cl := r.waitFrame(stream, "clarify")
					qs, _ := cl["questions"].([]any)
					if len(qs) != 2 || qs[0].(map[string]any)["multi_select"] != true {
						t.Fatalf("clarify %v", cl)
					}
					if err := r.Svc.Approvals().RespondClarify(ctx, sid, cl["clarify_id"].(string), []any{[]any{"red", "blue"}, "two"}); err != nil {
						t.Fatalf("RespondClarify: %v", err)
					}
					r.CheckFrames(stream, r.waitEndLong(stream), protocol.EvDone)
					tm := strings.Join(toolResults(lastChat(r.Provider.Requests())), " ")
					if !strings.Contains(tm, "red") || !strings.Contains(tm, "blue") || !strings.Contains(tm, "two") {
						t.Errorf("the model did not read the answers: %s", tm)
					}
				})
			}

			r.run(t, "a secret through the vault card reaches the command and nothing of ours keeps it", func(t *testing.T) {
				canary := "canary-" + in.Name + "-Zq8vR2kx9"
				sum := sha256.Sum256([]byte(canary))
				want := hex.EncodeToString(sum[:])
				r.Provider.Enqueue(
					providertest.CallTurn("", providertest.Call("s1", "skill_view", map[string]any{"name": "canary-skill"})),
					providertest.CallTurn("", providertest.Call("s2", "terminal", map[string]any{"command": `printf %s "$CANARY_TOKEN" | sha256sum`})),
					providertest.TextTurn("Checked."))
				stream := r.Start(sid, "check the canary")
				cl := r.waitFrame(stream, "clarify")
				if cl["kind"] != "vault" || cl["name"] != "CANARY_TOKEN" || !strings.Contains(fmt.Sprint(cl["agent_notice"]), ".env") {
					t.Fatalf("vault card %v", cl)
				}
				if _, err := r.Svc.Approvals().RespondVault(ctx, sid, cl["clarify_id"].(string), backend.VaultAnswer{Value: canary}, false); err != nil {
					t.Fatalf("RespondVault: %v", err)
				}
				frames := r.waitEndLong(stream)
				r.CheckFrames(stream, frames, protocol.EvDone)
				var out string
				for _, tc := range backendtest.FramesOf(frames, "tool_complete") {
					if tc["name"] == "terminal" {
						out = fmt.Sprint(tc["preview"])
					}
				}
				if !strings.Contains(out, want) {
					t.Fatalf("the command did not get the secret: output %q, want the hash %s\n%s", out, want, r.Describe(stream))
				}
				// Hermes keeps it in its own .env (the card says so) ...
				if env, _ := os.ReadFile(filepath.Join(r.home.Dir, ".env")); !strings.Contains(string(env), canary) {
					t.Errorf("Hermes's .env does not hold the secret (the card's notice would be wrong)")
				}
				// ... and nothing of ours: data folder (database, WAL, journal), logs, frames.
				for st, fs := range r.AllFrames() {
					for _, f := range fs {
						if strings.Contains(string(f.Data), canary) {
							t.Errorf("frame %s of %s holds the secret", f.Event, st)
						}
					}
				}
				filepath.WalkDir(r.Svc.Paths.DataDir, func(p string, d os.DirEntry, err error) error { //nolint:errcheck
					if err != nil || d.IsDir() {
						return nil
					}
					if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(canary)) {
						t.Errorf("%s holds the secret", p)
					}
					return nil
				})
			})

			r.run(t, "a steer during a tool is read by the agent", func(t *testing.T) {
				// The command ends once the steer was delivered (the test then creates the
				// file it waits for): a fixed sleep could end first on a stalled machine, and
				// the steer would miss the tool.
				gate := filepath.Join(r.ws, "steered-"+in.Name)
				r.Provider.Enqueue(providertest.CallTurn("", providertest.Call("t1", "terminal", map[string]any{
					"command": "until test -e " + gate + "; do sleep 0.05; done; echo slept"})),
					providertest.TextTurn("Done, with bananas."))
				stream := r.Start(sid, "take a nap")
				r.waitFrame(stream, "tool")
				if _, err := r.Svc.Turns().Steer(ctx, sid, "also mention bananas"); err != nil {
					t.Fatalf("Steer: %v", err)
				}
				if err := os.WriteFile(gate, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				frames := r.waitEndLong(stream)
				r.CheckFrames(stream, frames, protocol.EvDone)
				if u, _ := backendtest.FramesOf(frames, protocol.EvDone)[0]["usage"].(map[string]any); u["input_tokens"] != float64(0) {
					t.Errorf("a turn whose model reported no usage has usage %v (session totals leaked?)", u)
				}
				if body := string(lastChat(r.Provider.Requests()).Body); !strings.Contains(body, "also mention bananas") {
					t.Errorf("the model's next request lacks the steer")
				}
				if len(backendtest.FramesOf(frames, "steer_consumed")) != 1 {
					t.Errorf("steer_consumed frames:\n%s", r.Describe(stream))
				}
				if rows := r.UserRows(sid); len(rows) == 0 || rows[len(rows)-1] != "also mention bananas" {
					t.Errorf("user rows %v", rows)
				}
			})

			r.run(t, "Hermes sessions: listed, read-only history, Continue here resumes one", func(t *testing.T) {
				// A Hermes session Talaria no longer has a chat for (deleted here; Hermes
				// keeps it), as one made in Hermes's CLI would be.
				orphan := r.NewSession()
				r.Provider.Enqueue(providertest.TextTurn("Remember the code word: heliotrope."))
				st := r.Start(orphan, "pick a code word")
				r.CheckFrames(st, r.waitEndLong(st), protocol.EvDone)
				v, _ := r.Svc.Chats().GetSession(ctx, orphan)
				agentID := v.Session.AgentSessionID
				if err := r.Svc.Chats().DeleteSession(ctx, orphan); err != nil {
					t.Fatal(err)
				}
				list, err := r.Svc.Agents().HermesSessions(ctx, "hermes")
				if err != nil {
					t.Fatalf("HermesSessions: %v", err)
				}
				var found, boundMain bool
				for _, hs := range list {
					if hs.AgentSessionID == agentID {
						found = hs.TalariaSessionID == "" && hs.MessageCount >= 2
					}
					if hs.TalariaSessionID == sid {
						boundMain = true
					}
				}
				if !found || !boundMain {
					t.Fatalf("HermesSessions %+v (want %s unbound, one bound to %s)", list, agentID, sid)
				}
				hist, err := r.Svc.Agents().HermesHistory(ctx, "hermes", agentID)
				if err != nil || len(hist.Messages) < 2 || !strings.Contains(hist.Messages[len(hist.Messages)-1].Content, "heliotrope") {
					t.Fatalf("HermesHistory %+v %v", hist, err)
				}
				cont, err := r.Svc.Agents().ContinueHermesSession(ctx, "hermes", agentID)
				if err != nil || cont.AgentSessionID != agentID || cont.Runtime != "hermes" {
					t.Fatalf("ContinueHermesSession %+v %v", cont, err)
				}
				if again, _ := r.Svc.Agents().ContinueHermesSession(ctx, "hermes", agentID); again.ID != cont.ID {
					t.Errorf("a second Continue here made another chat")
				}
				if msgs := r.Messages(cont.ID); len(msgs) < 2 || !strings.Contains(msgs[len(msgs)-1].Content, "heliotrope") {
					t.Errorf("the continued chat shows %+v", msgs)
				}
				r.Provider.Enqueue(providertest.TextTurn("It was heliotrope."))
				st2 := r.Start(cont.ID, "what was the code word?")
				r.CheckFrames(st2, r.waitEndLong(st2), protocol.EvDone)
				body := string(lastChat(r.Provider.Requests()).Body)
				if !strings.Contains(body, "Remember the code word: heliotrope.") {
					t.Errorf("the continued turn's request lacks the Hermes session's conversation")
				}
				if after, _ := r.Svc.Chats().GetSession(ctx, cont.ID); after.Session.AgentSessionID != agentID {
					t.Errorf("the continued chat moved to Hermes session %q", after.Session.AgentSessionID)
				}
				// Deleting the continued chat removes it from Talaria only; the delete
				// dialog says Hermes keeps its history, and Hermes still lists it.
				if by, err := r.Svc.Chats().HistoryKeptBy(ctx, cont.ID); err != nil || by != "Hermes" {
					t.Errorf("HistoryKeptBy of the continued chat = %q, %v; want Hermes", by, err)
				}
				if by, err := r.Svc.Chats().HistoryKeptBy(ctx, sid); err != nil || by != "" {
					t.Errorf("HistoryKeptBy of a chat made here = %q, %v; want none", by, err)
				}
				if err := r.Svc.Chats().DeleteSession(ctx, cont.ID); err != nil {
					t.Fatal(err)
				}
				list, err = r.Svc.Agents().HermesSessions(ctx, "hermes")
				if err != nil {
					t.Fatalf("HermesSessions: %v", err)
				}
				found = false
				for _, hs := range list {
					found = found || (hs.AgentSessionID == agentID && hs.TalariaSessionID == "")
				}
				if !found {
					t.Errorf("after deleting the continued chat Hermes no longer lists %s unbound: %+v", agentID, list)
				}
			})

			r.run(t, "Hermes's models", func(t *testing.T) {
				m, err := r.Svc.Agents().HermesModels(ctx, "hermes")
				if err != nil {
					t.Fatalf("HermesModels: %v", err)
				}
				if m.Current != "scripted-model" {
					t.Errorf("current model %q (providers %+v)", m.Current, m.Providers)
				}
			})

			r.run(t, "Diagnostics shows the Hermes runtime: version, dialect, features, the gateway's output", func(t *testing.T) {
				var got *backend.RuntimeDiagnostics
				d := r.Svc.About().Diagnostics(ctx)
				for i := range d.Runtimes {
					if d.Runtimes[i].Status.RuntimeID == r.runtimeID {
						got = &d.Runtimes[i]
					}
				}
				if got == nil {
					t.Fatalf("Diagnostics lists no %s runtime: %+v", r.runtimeID, d.Runtimes)
				}
				if got.Status.AgentVersion != in.Version || got.Status.Dialect != in.Dialect || len(got.Status.Features) == 0 {
					t.Errorf("status %+v", got.Status)
				}
				tail := strings.Join(got.StderrTail, "\n")
				if !strings.Contains(tail, "Hermes gateway ready") {
					t.Errorf("stderr tail lacks the runtime's start line:\n%s", tail)
				}
				if in.Dialect == "B" && !strings.Contains(tail, "hermes gateway") {
					t.Errorf("stderr tail lacks the gateway's own output:\n%s", tail)
				}
			})

			r.run(t, "a second session runs concurrently without mixing frames", func(t *testing.T) {
				other := r.NewSession()
				// Echo answers ("You said: ...") make each session's answer its own.
				s1 := r.Start(sid, "alpha one")
				s2 := r.Start(other, "beta two")
				f1, f2 := r.waitEndLong(s1), r.waitEndLong(s2)
				r.CheckFrames(s1, f1, protocol.EvDone)
				r.CheckFrames(s2, f2, protocol.EvDone)
				if a, b := backendtest.TextOf(f1, "token"), backendtest.TextOf(f2, "token"); !strings.Contains(a, "alpha one") || strings.Contains(a, "beta") ||
					!strings.Contains(b, "beta two") || strings.Contains(b, "alpha") {
					t.Errorf("mixed answers: %q / %q", a, b)
				}
			})

			r.run(t, "the sidecar killed, the next turn resumes the same Hermes session", func(t *testing.T) {
				before, _ := r.Svc.Chats().GetSession(ctx, sid)
				st, ok := statusOf(r.Svc, r.runtimeID)
				if !ok || st.PID == 0 {
					t.Fatalf("no running Hermes sidecar: %+v", st)
				}
				gateways := childrenOf(st.PID)
				if len(gateways) == 0 {
					t.Fatalf("the Hermes sidecar %d has no gateway child", st.PID)
				}
				if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				// No orphan: the gateway dies with its sidecar (parent-death signal).
				for _, pid := range gateways {
					waitProcessGone(t, pid)
				}
				r.await("the Hermes sidecar back and ready", func() bool {
					s2, ok := statusOf(r.Svc, r.runtimeID)
					return ok && s2.State == "ready" && s2.PID != st.PID
				})
				r.Provider.Enqueue(providertest.TextTurn("Still here."))
				stream := r.Start(sid, "are you there")
				frames := r.waitEndLong(stream)
				r.CheckFrames(stream, frames, protocol.EvDone)
				after, _ := r.Svc.Chats().GetSession(ctx, sid)
				if after.Session.AgentSessionID != before.Session.AgentSessionID {
					t.Errorf("agent session %q after the restart, want %q", after.Session.AgentSessionID, before.Session.AgentSessionID)
				}
				last := lastChat(r.Provider.Requests())
				if body := string(last.Body); !strings.Contains(body, "Hello from Hermes.") {
					t.Errorf("the resumed turn's request lacks the earlier conversation")
				}
				if n := strings.Count(string(last.Body), "Hello from Hermes."); n != 1 {
					t.Errorf("the earlier answer appears %d times in the request (history re-sent?)", n)
				}
			})

			r.run(t, "stop mid-stream keeps the partial text, and the next message waits for Hermes to wind down", func(t *testing.T) {
				gate, open := backendtest.Release()
				defer open()
				r.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Partial answer"}, {Text: " never sent", Wait: gate}}})
				stream := r.Start(sid, "write a long story")
				r.WaitText(stream, "Partial answer")
				t0 := time.Now()
				if err := r.Svc.Turns().Cancel(stream); err != nil {
					t.Fatal(err)
				}
				// The model's call stays held at the provider until after the stream ended
				// (open, below): a stop that waited for the model would never end here.
				frames := r.waitEndLong(stream)
				t.Logf("stop took %s", time.Since(t0).Round(time.Millisecond))
				r.CheckFrames(stream, frames, protocol.EvCancel)
				// The partial row, then the host's cancelled marker.
				msgs := r.Messages(sid)
				if len(msgs) < 2 || msgs[len(msgs)-1].Kind != "cancelled" {
					t.Fatalf("rows %+v", msgs)
				}
				if kept := msgs[len(msgs)-2]; kept.Role != "assistant" || !strings.Contains(kept.Content, "Partial answer") || strings.Contains(kept.Content, "never sent") {
					t.Errorf("kept %+v", kept)
				}
				// The model call of the stopped turn is still held at the provider. Hermes
				// 0.19 keeps that turn running until the call returns (a prompt now is
				// refused as busy, 4009): the next message waits for Hermes's session.info
				// to say it stopped, and says so. The 0.22 line ends the turn at the
				// interrupt (turn isolation): the next message runs at once.
				r.Provider.Enqueue(providertest.TextTurn("After the stop."))
				next := r.Start(sid, "and now a short one")
				waited := false
				r.await("the next turn waiting for Hermes, or ended", func() bool {
					for _, d := range backendtest.FramesOf(r.framesSeen(next), protocol.EvRunStatus) {
						if strings.Contains(fmt.Sprint(d["detail"]), "previous turn") {
							waited = true
						}
					}
					return waited || backendtest.HasEvent(r.framesSeen(next), protocol.EvStreamEnd)
				})
				t.Logf("the next message waited for Hermes to end the stopped turn: %v", waited)
				open()
				f2 := r.waitEndLong(next)
				r.CheckFrames(next, f2, protocol.EvDone)
				if got := backendtest.TextOf(f2, "token"); got != "After the stop." {
					t.Errorf("the turn after the stop streamed %q:\n%s", got, r.Describe(next))
				}
			})

			r.run(t, "a crashed gateway ends the turn sidecar_unavailable and is restarted", func(t *testing.T) {
				st, _ := statusOf(r.Svc, r.runtimeID)
				gate, open := backendtest.Release()
				defer open()
				r.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Working on it"}, {Text: "...", Wait: gate}}})
				stream := r.Start(sid, "a long job")
				r.WaitText(stream, "Working on it")
				for _, pid := range childrenOf(st.PID) {
					syscall.Kill(-pid, syscall.SIGKILL) //nolint:errcheck // its whole process group
				}
				frames := r.waitEndLong(stream)
				r.CheckFrames(stream, frames, protocol.EvAppError)
				if ae := backendtest.FramesOf(frames, "apperror"); len(ae) != 1 || ae[0]["type"] != "sidecar_unavailable" {
					t.Errorf("apperror %v", ae)
				}
				if st2, _ := statusOf(r.Svc, r.runtimeID); st2.PID != st.PID {
					t.Errorf("the sidecar itself was replaced (%d -> %d): only the gateway should restart", st.PID, st2.PID)
				}
				back := providertest.TextTurn("Back again.")
				back.Usage = &providertest.Usage{PromptTokens: 77, CompletionTokens: 5}
				r.Provider.Enqueue(back)
				next := r.Start(sid, "and now?")
				f2 := r.waitEndLong(next)
				r.CheckFrames(next, f2, protocol.EvDone)
				if got := backendtest.TextOf(f2, "token"); got != "Back again." {
					t.Errorf("after the restart: %q", got)
				}
				// The turn's own figures, not Hermes's session totals.
				usage, _ := backendtest.FramesOf(f2, protocol.EvDone)[0]["usage"].(map[string]any)
				if usage["input_tokens"] != float64(77) || usage["output_tokens"] != float64(5) {
					t.Errorf("usage of the turn after the restart: %v", usage)
				}
			})

		})
	}
}

// lastChat is the last streaming (chat) request: Hermes's own title calls are not.
func lastChat(reqs []providertest.Request) providertest.Request {
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Stream {
			return reqs[i]
		}
	}
	return providertest.Request{}
}

func toolResults(r providertest.Request) []string {
	var out []string
	for _, m := range r.ToolResults() {
		out = append(out, m.Content)
	}
	return out
}

// childrenOf lists pid's child processes (Linux /proc).
func childrenOf(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			var c int
			if _, err := fmt.Sscan(f, &c); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// waitProcessGone waits until pid no longer runs (a zombie counts as gone).
func waitProcessGone(t *testing.T, pid int) {
	t.Helper()
	if !testwait.Until(func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil || strings.Contains(string(b), ") Z ")
	}) {
		t.Errorf("process %d outlived its sidecar", pid)
	}
}
