//go:build linux

package history_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/history"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The test binary is also the sidecar: the backend starts it with
// TALARIA_TEST_SIDECAR set, and `sidecar` plus the runtime's flags after it.
func TestMain(m *testing.M) {
	if os.Getenv("TALARIA_TEST_SIDECAR") == "" {
		os.Exit(m.Run())
	}
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "sidecar" {
		args = args[1:]
	}
	os.Exit(sidecar.Main(args, os.Stdin, os.Stdout, os.Stderr))
}

// hermesService opens a backend.Service on its own data folder, driving the real
// Hermes install in through the real sidecar (this binary) with HERMES_HOME home.
func hermesService(t *testing.T, in hermestest.Install, home hermestest.Home, dataDir string) *backend.Service {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: dataDir,
		DefaultWorkspace: filepath.Join(t.TempDir(), "Talaria"), Version: "test", SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"}, Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, e := range home.Env {
		if !strings.HasPrefix(e, "HERMES_HOME=") {
			env = append(env, e)
		}
	}
	svc.Agents().RegisterHermes(backend.HermesConfig{Python: in.Python, Prefix: in.Prefix, Home: home.Dir, Env: env})
	if err := svc.Agents().SetDefaultRuntime(context.Background(), protocol.RuntimeHermes); err != nil {
		t.Fatal(err)
	}
	return svc
}

func closeService(t *testing.T, svc *backend.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	if err := svc.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// turnRunner runs turns on a service and waits for each stream's end.
type turnRunner struct {
	t     *testing.T
	svc   *backend.Service
	mu    sync.Mutex
	ended map[string]string // stream -> terminal event
	last  map[string]string
}

func newTurnRunner(t *testing.T, svc *backend.Service) *turnRunner {
	r := &turnRunner{t: t, svc: svc, ended: map[string]string{}, last: map[string]string{}}
	t.Cleanup(svc.Bus.Subscribe(func(ev bus.Event) {
		f, ok := ev.Payload.(turn.Frame)
		if !ok {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if f.Event == protocol.EvStreamEnd {
			r.ended[f.StreamID] = r.last[f.StreamID]
		} else if f.Event == protocol.EvDone || f.Event == protocol.EvAppError || f.Event == protocol.EvCancel {
			r.last[f.StreamID] = f.Event
		}
	}))
	return r
}

// turn sends text in session and waits for the turn to end done.
func (r *turnRunner) turn(session, text string) {
	r.t.Helper()
	st, err := r.svc.Turns().StartTurn(context.Background(), session, text)
	if err != nil {
		r.t.Fatalf("StartTurn(%q): %v", text, err)
	}
	var terminal string
	testwait.For(r.t, "the end of the turn "+text, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		var ok bool
		terminal, ok = r.ended[st.StreamID]
		return ok
	})
	if terminal != protocol.EvDone {
		r.t.Fatalf("the turn %q ended %q, not done", text, terminal)
	}
}

func TestHermesImport(t *testing.T) {
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) { testHermesImport(t, in) })
	}
}

func testHermesImport(t *testing.T, in hermestest.Install) {
	ctx := context.Background()
	start := time.Now()
	defer func() {
		t.Logf("Hermes %s (dialect %s): %s", in.Version, in.Dialect, time.Since(start).Round(time.Millisecond))
	}()
	provider := providertest.Start()
	t.Cleanup(provider.Close)
	provider.SplitAux(true)
	home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: provider.BaseURL(), Toolsets: "terminal,file"})

	// Real Hermes sessions, made by a first Talaria whose chats are then forgotten: a
	// session with a tool call and two turns, and a one-turn session.
	maker := hermesService(t, in, home, t.TempDir())
	mr := newTurnRunner(t, maker)
	chatA, err := maker.Chats().NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	provider.Enqueue(providertest.CallTurn("Let me count.", providertest.Call("w1", "terminal", map[string]any{"command": "echo wombat-census-42"})),
		providertest.TextTurn("There are 42 wombats."))
	mr.turn(chatA.ID, "count the wombats")
	provider.Enqueue(providertest.TextTurn("No echidnas today."))
	mr.turn(chatA.ID, "and the echidnas?")
	chatB, err := maker.Chats().NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	provider.Enqueue(providertest.TextTurn("Hi from the quokka."))
	mr.turn(chatB.ID, "hello quokka")
	hermesID := func(id string) string {
		v, err := maker.Chats().GetSession(ctx, id)
		if err != nil || v.Session.AgentSessionID == "" {
			t.Fatalf("chat %s has no Hermes session: %+v %v", id, v.Session, err)
		}
		return v.Session.AgentSessionID
	}
	idA, idB := hermesID(chatA.ID), hermesID(chatB.ID)
	closeService(t, maker)

	// A second Talaria, with an empty store, imports them.
	dataDir := t.TempDir()
	svc := hermesService(t, in, home, dataDir)
	defer closeService(t, svc)
	var events []history.Progress
	var emu sync.Mutex
	t.Cleanup(svc.Bus.Subscribe(func(ev bus.Event) {
		if p, ok := ev.Payload.(history.Progress); ok {
			emu.Lock()
			events = append(events, p)
			emu.Unlock()
		}
	}))
	im := history.New(svc.Store, svc.Bus, svc.Agents())
	list, err := svc.Agents().HermesSessions(ctx, "hermes")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("Hermes lists %d sessions: %+v", len(list), list)
	}

	p, err := im.RunHermes(ctx, history.HermesRequest{RuntimeID: "hermes", SessionIDs: []string{idA}})
	if err != nil {
		t.Fatal(err)
	}
	if p.State != history.StateDone || p.Total != 1 || p.Imported != 1 || len(p.SessionIDs) != 1 {
		t.Fatalf("import of %s: %+v", idA, p)
	}
	imported := p.SessionIDs[0]
	sess, err := svc.Store.GetSession(ctx, imported)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Runtime != "hermes" || sess.AgentSessionID != idA {
		t.Errorf("the imported chat is not bound to its Hermes session: %+v", sess)
	}
	rows, err := svc.Store.Messages(ctx, imported)
	if err != nil {
		t.Fatal(err)
	}
	dump, _ := json.MarshalIndent(rows, "", " ")
	t.Logf("imported rows (%s):\n%s", in.Dialect, dump)
	checkImportedRows(t, in, rows)

	// Search finds the imported text at once.
	for _, q := range []string{"wombats", "echidnas"} {
		hits, err := svc.Store.Search(ctx, q, 10)
		if err != nil || len(hits) == 0 || hits[0].SessionID != imported {
			t.Errorf("Search(%q) = %+v, %v", q, hits, err)
		}
	}
	// "Continue here" on an imported session finds the imported chat.
	if c, err := svc.Agents().ContinueHermesSession(ctx, "hermes", idA); err != nil || c.ID != imported {
		t.Errorf("ContinueHermesSession = %+v, %v; want the imported chat", c, err)
	}

	// All of the profile: the other one; then again: nothing.
	p, err = im.RunHermes(ctx, history.HermesRequest{RuntimeID: "hermes", All: true})
	if err != nil || p.Total != 2 || p.Imported != 1 || p.Skipped != 1 || p.Failed != 0 {
		t.Fatalf("import all: %+v, %v", p, err)
	}
	other := p.SessionIDs[0]
	if s, _ := svc.Store.GetSession(ctx, other); s.AgentSessionID != idB {
		t.Errorf("the second chat is bound to %q, not %s", s.AgentSessionID, idB)
	}
	p, err = im.RunHermes(ctx, history.HermesRequest{RuntimeID: "hermes", All: true})
	if err != nil || p.Imported != 0 || p.Skipped != 2 || p.Failed != 0 {
		t.Fatalf("second import of all: %+v, %v", p, err)
	}
	if l, _ := svc.Store.ListSessions(ctx, 0, 0); len(l) != 2 {
		t.Errorf("%d chats after three imports; want 2", len(l))
	}
	emu.Lock()
	n := len(events)
	emu.Unlock()
	if n < 6 {
		t.Errorf("only %d progress events", n)
	}

	// A continued imported chat resumes the same Hermes session: Hermes still has the
	// tool call of the first turn (a new session seeded from the transcript would have
	// user and assistant text only), and no new Hermes session appears.
	tr := newTurnRunner(t, svc)
	before := len(provider.Requests())
	provider.Enqueue(providertest.TextTurn("Still 42 wombats."))
	tr.turn(imported, "how many wombats again?")
	reqs := provider.Requests()[before:]
	var last *providertest.Request
	for i := range reqs {
		if reqs[i].Stream {
			last = &reqs[i]
		}
	}
	if last == nil {
		t.Fatal("no chat request for the continued turn")
	}
	var sawTool, sawFirst bool
	for _, m := range last.Messages {
		sawTool = sawTool || (m.Role == "tool" && strings.Contains(m.Content, "wombat-census-42"))
		sawFirst = sawFirst || (m.Role == "user" && strings.Contains(m.Content, "count the wombats"))
	}
	if !sawTool || !sawFirst {
		t.Errorf("the continued turn's request lacks Hermes's own history (tool result %v, first message %v)", sawTool, sawFirst)
	}
	if s, _ := svc.Store.GetSession(ctx, imported); s.AgentSessionID != idA {
		t.Errorf("after a turn the chat is bound to %q, not %s", s.AgentSessionID, idA)
	}
	if l, err := svc.Agents().HermesSessions(ctx, "hermes"); err != nil || len(l) != 2 {
		t.Errorf("Hermes lists %d sessions after the continued turn (%v); want the same 2", len(l), err)
	}

	// Cancel: with both chats deleted (their keys freed), an import of all is
	// cancelled once the first chat is in; only that one is.
	for _, id := range []string{imported, other} {
		if err := svc.Chats().DeleteSession(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unsub := svc.Bus.Subscribe(func(ev bus.Event) {
		if p, ok := ev.Payload.(history.Progress); ok && p.Imported == 1 {
			cancel()
		}
	})
	p, err = im.RunHermes(cctx, history.HermesRequest{RuntimeID: "hermes", All: true})
	unsub()
	if err != nil || p.State != history.StateCancelled || p.Imported != 1 || p.Total != 2 {
		t.Errorf("cancelled import: %+v, %v", p, err)
	}
	if l, _ := svc.Store.ListSessions(ctx, 0, 0); len(l) != 1 {
		t.Errorf("%d chats after a cancelled import; want 1", len(l))
	}

	// The imported chat opens offline: the store alone, no gateway, holds it.
	closeService(t, svc)
	st, err := store.Open(ctx, filepath.Join(dataDir, "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := st.ListSessions(ctx, 0, 0)
	if err != nil || len(l) != 1 {
		t.Fatalf("offline list: %+v, %v", l, err)
	}
	if rows, err := st.Messages(ctx, l[0].ID); err != nil || len(rows) == 0 {
		t.Errorf("offline rows: %d, %v", len(rows), err)
	}
}

// checkImportedRows checks the first session's rows: the two turns, the tool call and
// its outcome, the texts, as Hermes's transcript gives them in each dialect.
func checkImportedRows(t *testing.T, in hermestest.Install, rows []store.Message) {
	t.Helper()
	var texts []string
	var call *protocol.ToolCall
	var result *store.Message
	for i := range rows {
		m := &rows[i]
		texts = append(texts, m.Role+":"+m.Content)
		if len(m.ToolCalls) > 0 {
			if call != nil || len(m.ToolCalls) != 1 {
				t.Errorf("more than one tool call: %+v", m.ToolCalls)
				continue
			}
			call = &m.ToolCalls[0]
		}
		if m.Role == "tool" {
			result = m
		}
		if m.CreatedAt <= 0 {
			t.Errorf("row %d has no time", i)
		}
	}
	joined := strings.Join(texts, "\n")
	for _, want := range []string{"user:count the wombats", "assistant:There are 42 wombats.", "user:and the echidnas?", "assistant:No echidnas today."} {
		if !strings.Contains(joined, want) {
			t.Errorf("rows lack %q:\n%s", want, joined)
		}
	}
	if call == nil || result == nil {
		t.Fatalf("no tool call or no tool row:\n%s", joined)
	}
	if call.Function.Name != "terminal" || result.ToolCallID != call.ID || result.Name != "terminal" ||
		!strings.Contains(result.Content, "wombat-census-42") {
		t.Errorf("tool call %+v, result %+v", call, result)
	}
	if in.Dialect == "B" && (call.ID != "w1" || !strings.Contains(call.Function.Arguments, "echo wombat-census-42")) {
		t.Errorf("dialect B gives the call's id and arguments: %+v", call)
	}
	// The tool call comes after the first user row and before the first answer.
	ui, ci, ai := -1, -1, -1
	for i, m := range rows {
		switch {
		case ui < 0 && m.Role == "user":
			ui = i
		case ci < 0 && len(m.ToolCalls) > 0:
			ci = i
		case ai < 0 && m.Content == "There are 42 wombats.":
			ai = i
		}
	}
	if !(ui < ci && ci < ai) {
		t.Errorf("order: user %d, call %d, answer %d", ui, ci, ai)
	}
}
