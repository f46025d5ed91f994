//go:build linux

package backend_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The secret canary (issue #10): a secret given once, for the session only (not kept in
// the keychain), stays out of every sink for good: the frames the window gets live,
// the journal, SQLite (the database, its write-ahead log), the logs, what the model
// reads; after a sidecar restart and after an app restart; raw, base64, base64url, hex
// and URL-encoded; and when the model prints it split over many small tokens.

const canary = "CANARY-8c2f/x+y=z&q-7Hd91kLmN0"

// canaryForms are the encodings a command or a model may print, inside other text.
func canaryForms() map[string]string {
	b := []byte(canary)
	forms := map[string]string{
		"raw":              canary,
		"base64":           base64.StdEncoding.EncodeToString(b),
		"base64 newline":   base64.StdEncoding.EncodeToString(append(b, '\n')),
		"base64url":        base64.RawURLEncoding.EncodeToString(b),
		"hex":              hex.EncodeToString(b),
		"HEX":              strings.ToUpper(hex.EncodeToString(b)),
		"url":              url.QueryEscape(canary),
		"url path":         url.PathEscape(canary),
		"json":             strings.Trim(string(mustJSON(canary)), `"`),
		"distinctive part": "7Hd91kLmN0",
	}
	return forms
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// app is one run of the backend over a data folder, with every frame it published.
type app struct {
	t      *testing.T
	svc    *backend.Service
	mu     sync.Mutex
	frames []turn.Frame
	ended  map[string]chan struct{}
	unsub  func()
}

func openApp(t *testing.T, opts backend.Options) *app {
	t.Helper()
	svc, err := backend.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	a := &app{t: t, svc: svc, ended: map[string]chan struct{}{}}
	a.unsub = svc.Bus.Subscribe(func(ev bus.Event) {
		f, ok := ev.Payload.(turn.Frame)
		if !ok {
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.frames = append(a.frames, f)
		if f.Event == protocol.EvStreamEnd {
			a.endCh(f.StreamID)
			close(a.ended[f.StreamID])
		}
	})
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}

func (a *app) endCh(stream string) chan struct{} {
	if a.ended[stream] == nil {
		a.ended[stream] = make(chan struct{})
	}
	return a.ended[stream]
}

func (a *app) close() {
	a.t.Helper()
	a.unsub()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	if err := a.svc.Close(ctx); err != nil {
		a.t.Fatalf("close: %v", err)
	}
}

func (a *app) waitEnd(stream string) {
	a.t.Helper()
	a.mu.Lock()
	ch := a.endCh(stream)
	a.mu.Unlock()
	if !backendtest.WaitClosed(ch) {
		a.t.Fatalf("stream %s did not end", stream)
	}
}

func (a *app) waitFrame(stream, event string) turn.Frame {
	a.t.Helper()
	var found turn.Frame
	if !testwait.Until(func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, f := range a.frames {
			if f.StreamID == stream && f.Event == event {
				found = f
				return true
			}
		}
		return false
	}) {
		a.t.Fatalf("no %s frame on %s", event, stream)
	}
	return found
}

// splitTokens is the canary as a model streams it: two bytes per delta, 40 ms apart
// (longer than the host's coalescing window, so the pieces reach it as separate
// frames).
func splitTokens(prefix string) providertest.Turn {
	t := providertest.TextTurn(prefix)
	for i := 0; i < len(canary); i += 2 {
		t.Chunks = append(t.Chunks, providertest.Chunk{Text: canary[i:min(i+2, len(canary))], Delay: 40 * time.Millisecond})
	}
	t.Chunks = append(t.Chunks, providertest.Chunk{Text: " (that was the token)."})
	return t
}

const printsEverything = `printf %s "$CANARY_TOKEN" > secret.txt; cat secret.txt; echo; base64 secret.txt; base64 -w0 secret.txt | tr '+/' '-_'; echo; ` +
	`xxd -p -c 256 secret.txt; python3 -c "import urllib.parse,sys;print(urllib.parse.quote(open('secret.txt').read(),safe=''))"`

const readsItBack = `cat secret.txt; echo; base64 secret.txt; (cat secret.txt; echo) | base64; xxd -p -c 256 secret.txt; xxd -p -c 256 secret.txt | tr a-f A-F; ` +
	`python3 -c "import urllib.parse;print(urllib.parse.quote(open('secret.txt').read(),safe=''))"`

func TestSecretCanaryEverySink(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.SplitAux(true) // the title call (after stream_end) has its own queue
	exe, _ := os.Executable()
	data := t.TempDir()
	ws := t.TempDir()
	kr := vault.NewMemoryKeyring()
	opts := backend.Options{DataDir: data, DefaultWorkspace: ws, Version: "test", SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"}, Keyring: kr,
		Supervisor: backendtest.SupervisorConfig}
	ctx := context.Background()
	a := openApp(t, opts)
	if _, err := a.svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: p.BaseURL(), Model: "scripted-model", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	sess, err := a.svc.Chats().NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Run 1: the secret is given for this session only; commands print it in every
	// encoding; the model prints it two bytes at a time.
	p.Enqueue(
		backendtest.ToolTurn("v1", "request_secret", map[string]any{"name": "CANARY_TOKEN", "reason": "to test"}),
		backendtest.ToolTurn("c1", "terminal", map[string]any{"command": printsEverything}),
		backendtest.ToolTurn("r1", "read_file", map[string]any{"path": "secret.txt"}),
		backendtest.ToolTurn("s1", "search_files", map[string]any{"pattern": "CANARY", "path": "."}),
		splitTokens("The token is "))
	p.EnqueueAux(providertest.TextTurn("Token test"))
	st, err := a.svc.Turns().StartTurn(ctx, sess.ID, "test the token")
	if err != nil {
		t.Fatal(err)
	}
	cl := a.waitFrame(st.StreamID, protocol.EvClarify)
	var cd protocol.ClarifyData
	json.Unmarshal(cl.Data, &cd)
	if _, err := a.svc.Approvals().RespondVault(ctx, sess.ID, cd.ClarifyID, backend.VaultAnswer{Value: canary}, false); err != nil {
		t.Fatal(err)
	}
	a.waitEnd(st.StreamID)
	if b, _ := os.ReadFile(filepath.Join(ws, "secret.txt")); string(b) != canary {
		t.Fatalf("the command did not get the secret: %q", b)
	}

	// Run 2: the sidecar restarts (it forgets the secret); the file is read back.
	before := a.svc.Agents().GetStatus(ctx).Sidecar
	a.svc.Agents().RestartAgent()
	testwait.For(t, "the sidecar to come back", func() bool {
		now := a.svc.Agents().GetStatus(ctx).Sidecar
		return now.State == supervisor.StateReady && now.PID != before.PID
	})
	p.Enqueue(
		backendtest.ToolTurn("c2", "terminal", map[string]any{"command": readsItBack}),
		backendtest.ToolTurn("r2", "read_file", map[string]any{"path": "secret.txt"}),
		splitTokens("Still: "))
	st2, err := a.svc.Turns().StartTurn(ctx, sess.ID, "read it back")
	if err != nil {
		t.Fatal(err)
	}
	a.waitEnd(st2.StreamID)
	live := append([]turn.Frame(nil), a.frames...)
	a.close()

	// Run 3: the app restarts (it forgets the value; fingerprints remain).
	b := openApp(t, opts)
	defer b.close()
	p.Enqueue(
		backendtest.ToolTurn("c3", "terminal", map[string]any{"command": readsItBack}),
		backendtest.ToolTurn("r3", "read_file", map[string]any{"path": "secret.txt"}),
		backendtest.ToolTurn("s3", "search_files", map[string]any{"pattern": "7Hd9", "path": "."}),
		splitTokens("And after a restart: "))
	st3, err := b.svc.Turns().StartTurn(ctx, sess.ID, "once more")
	if err != nil {
		t.Fatal(err)
	}
	b.waitEnd(st3.StreamID)
	live = append(live, b.frames...)

	// The runs did happen: the outputs carry [REDACTED] where the secret was.
	redacted := 0
	for _, f := range live {
		redacted += bytes.Count(f.Data, []byte("[REDACTED]"))
	}
	if os.Getenv("CANARY_DEBUG") != "" {
		for _, f := range live {
			if f.Event == protocol.EvToolComplete || f.Event == protocol.EvToken {
				t.Logf("%s %s", f.Event, f.Data)
			}
		}
	}
	if redacted < 15 {
		t.Fatalf("only %d redactions: the commands did not print what they should", redacted)
	}

	var leaks []string
	check := func(where string, text []byte) {
		for name, form := range canaryForms() {
			if bytes.Contains(text, []byte(form)) {
				leaks = append(leaks, where+" ("+name+")")
			}
		}
	}
	for _, f := range live {
		check("live frame "+f.Event, f.Data)
	}
	for _, s := range []string{st.StreamID, st2.StreamID, st3.StreamID} {
		frames, _ := b.svc.Turns().StreamSince(ctx, s, 0)
		for _, f := range frames {
			check("journal "+f.Event, f.Data)
		}
		// A secret split over frames is a leak too: the text as the window joins it.
		check("the streamed text joined", []byte(backendtest.TextOf(frames, protocol.EvToken)))
	}
	for _, r := range p.Requests() {
		check("a request to the model", r.Body)
	}
	view, _ := b.svc.Chats().GetSession(ctx, sess.ID)
	check("the transcript", mustJSON(view))
	audit, _ := b.svc.Approvals().AuditCSV(ctx, storeAll())
	check("the audit log", []byte(audit))
	for _, format := range []string{backend.ExportMarkdown, backend.ExportJSON} {
		exp, err := b.svc.Chats().ExportSession(ctx, sess.ID, format)
		if err != nil || !strings.Contains(exp.Content, "[REDACTED]") {
			t.Fatalf("the %s export: %v (%d bytes, without a redaction)", format, err, len(exp.Content))
		}
		check("the "+format+" export", []byte(exp.Content))
	}
	_ = filepath.WalkDir(data, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if raw, _ := os.ReadFile(path); len(raw) > 0 {
				check(strings.TrimPrefix(path, data), raw)
			}
		}
		return nil
	})
	// The keychain holds the redaction key, never the secret (given for the session only).
	if v, err := kr.Get(vault.Service, "vault:CANARY_TOKEN"); err == nil {
		leaks = append(leaks, "the keychain: "+v)
	}
	if len(leaks) > 0 {
		t.Fatalf("the canary leaked to:\n  %s", strings.Join(leaks, "\n  "))
	}
	// Each run's streamed text (the canary in 2-byte pieces 40 ms apart) was redacted
	// before the journal: live equals replay.
	for _, s := range []string{st.StreamID, st2.StreamID, st3.StreamID} {
		frames, _ := b.svc.Turns().StreamSince(ctx, s, 0)
		if text := backendtest.TextOf(frames, protocol.EvToken); !strings.Contains(text, " [REDACTED] (that was the token).") {
			var evs []string
			for _, f := range frames {
				evs = append(evs, f.Event+" "+string(f.Data))
			}
			t.Fatalf("stream %s: text %q\n%s", s, text, strings.Join(evs, "\n"))
		}
	}
}

func storeAll() store.AuditFilter { return store.AuditFilter{} }

// TestSaveSettingsWithoutAKeychain: with no system keychain, Save keeps the API key for
// this session and succeeds, the settings saying there is no keychain (the dialog once
// showed the key kept in memory as a failed save); the next turn sends the key.
func TestSaveSettingsWithoutAKeychain(t *testing.T) {
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.Keyring = noSecretService{} })
	out, err := h.Svc.Settings().SaveSettings(t.Context(), backend.SettingsInput{ProviderName: "custom", BaseURL: h.Provider.BaseURL(),
		Model: "scripted-model", APIKey: "sk-session-only-key"})
	if err != nil {
		t.Fatalf("SaveSettings without a keychain: %v", err)
	}
	if out.KeyringAvailable || out.KeyringError == "" || !out.HasAPIKey {
		t.Fatalf("settings = %+v; want no keychain, its error, and the key kept", out)
	}
	h.Provider.Enqueue(providertest.TextTurn("ok"))
	sid := h.NewSession()
	s := h.Start(sid, "hi")
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
	reqs := h.Provider.Requests()
	if len(reqs) == 0 || reqs[len(reqs)-1].Authorization != "Bearer sk-session-only-key" {
		t.Fatalf("the turn did not send the session's key")
	}
}
