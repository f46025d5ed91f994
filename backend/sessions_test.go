package backend_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// openService opens a Service on a fresh data directory without starting the sidecar:
// the session actions need only the store.
func openService(t *testing.T) (*backend.Service, func() int) {
	t.Helper()
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: t.TempDir(), Version: "test",
		SidecarCommand: "/nonexistent", Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
		defer cancel()
		svc.Close(ctx)
	})
	var mu sync.Mutex
	changes := 0
	svc.Bus.Subscribe(func(ev bus.Event) {
		if ev.Name == bus.EventSessionsChanged {
			mu.Lock()
			changes++
			mu.Unlock()
		}
	})
	return svc, func() int {
		mu.Lock()
		defer mu.Unlock()
		n := changes
		changes = 0
		return n
	}
}

func TestSessionActionsPublishChanges(t *testing.T) {
	svc, changes := openService(t)
	ctx := context.Background()
	sess, err := svc.Chats().NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	changes()
	var dup store.Session
	steps := []struct {
		name        string
		do          func() error
		wantChanged bool
	}{
		{"rename", func() error { _, err := svc.Chats().RenameSession(ctx, sess.ID, "Trip to Lisbon"); return err }, true},
		{"pin", func() error { _, err := svc.Chats().PinSession(ctx, sess.ID, true); return err }, true},
		{"draft", func() error { return svc.Chats().SaveDraft(ctx, sess.ID, "and the return flight") }, false},
		{"duplicate", func() (err error) { dup, err = svc.Chats().DuplicateSession(ctx, sess.ID, "key-1"); return err }, true},
		{"fork at a bad position", func() error { _, err := svc.Chats().ForkSession(ctx, sess.ID, 3, ""); return err }, false},
		{"archive", func() error { _, err := svc.Chats().ArchiveSession(ctx, sess.ID, true); return err }, true},
		{"search", func() error { _, err := svc.Chats().SearchSessions(ctx, "lisbon", 0); return err }, false},
		{"rename to nothing", func() error { _, err := svc.Chats().RenameSession(ctx, sess.ID, "  "); return err }, false},
		{"delete", func() error { return svc.Chats().DeleteSession(ctx, dup.ID) }, true},
	}
	for _, st := range steps {
		err := st.do()
		if got := changes() > 0; got != st.wantChanged {
			t.Errorf("%s (err %v): published %v, want %v", st.name, err, got, st.wantChanged)
		}
	}
	got, _ := svc.Store.GetSession(ctx, sess.ID)
	if got.Title != "Trip to Lisbon" || !got.TitleManual || !got.Pinned || got.ArchivedAt == 0 {
		t.Errorf("session = %+v", got)
	}
	if list, _ := svc.Chats().ListSessions(ctx); len(list) != 0 {
		t.Errorf("archived session listed: %+v", list)
	}
	if list, _ := svc.Chats().ListArchivedSessions(ctx); len(list) != 1 || list[0].ID != sess.ID {
		t.Errorf("archived list = %+v", list)
	}
	if d, _ := svc.Chats().GetDraft(ctx, sess.ID); d.Text != "and the return flight" {
		t.Errorf("draft = %+v", d)
	}
	if dup.Title != "Trip to Lisbon (copy)" || dup.ForkedFrom != sess.ID {
		t.Errorf("duplicate = %+v", dup)
	}
	if hits, _ := svc.Chats().SearchSessions(ctx, "lisbon", 0); len(hits) != 1 || hits[0].SessionID != sess.ID || !hits[0].Archived {
		t.Errorf("search = %+v", hits)
	}
}

func TestExportAndImportThroughTheService(t *testing.T) {
	svc, changes := openService(t)
	ctx := context.Background()
	sess, _ := svc.Chats().NewSession(ctx)
	if _, err := svc.Store.AppendMessages(ctx, sess.ID, sess.Revision, []store.Message{
		{Role: "user", Content: "what is 2+2?"}, {Role: "assistant", Content: "4"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Chats().RenameSession(ctx, sess.ID, `Maths: 2/2 "basics"?`); err != nil {
		t.Fatal(err)
	}
	md, err := svc.Chats().ExportSession(ctx, sess.ID, "markdown")
	if err != nil {
		t.Fatal(err)
	}
	if md.Name != "Maths- 2-2 -basics.md" || md.MIMEType != "text/markdown" || !strings.Contains(md.Content, "## Assistant\n\n4\n") {
		t.Errorf("markdown export = %+v", md)
	}
	js, err := svc.Chats().ExportSession(ctx, sess.ID, "JSON")
	if err != nil {
		t.Fatal(err)
	}
	var doc store.Export
	if err := json.Unmarshal([]byte(js.Content), &doc); err != nil || !strings.HasSuffix(js.Name, ".talaria.json") ||
		doc.AppVersion != "test" || len(doc.Messages) != 2 {
		t.Fatalf("json export = %+v (%v)", js, err)
	}
	if _, err := svc.Chats().ExportSession(ctx, sess.ID, "pdf"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("pdf export = %v, want ErrInvalid", err)
	}
	changes()
	imported, err := svc.Chats().ImportSession(ctx, []byte(js.Content))
	if err != nil || imported.ID == sess.ID || imported.MessageCount != 2 || changes() == 0 {
		t.Fatalf("import = %+v, %v", imported, err)
	}
	_, err = svc.Chats().ImportSession(ctx, []byte(md.Content))
	var ie *store.ImportError
	if !errors.As(err, &ie) || changes() != 0 {
		t.Errorf("importing Markdown = %v, want *store.ImportError", err)
	}
}

// Deleting a session while its turn streams stops the turn, and the late settlement
// does not bring the session back.
func TestDeleteStopsTheRunningTurn(t *testing.T) {
	h := backendtest.New(t, "")
	sid := h.NewSession()
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "partial"}}, HangAfter: true})
	s := h.Start(sid, "a long job")
	h.WaitEvent(s, protocol.EvToken)
	if err := h.Svc.Chats().DeleteSession(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(s)
	if h.Svc.Runner.Live(s) {
		t.Error("the turn still runs")
	}
	if _, err := h.Svc.Chats().GetSession(context.Background(), sid); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetSession after delete = %v, want ErrNotFound", err)
	}
	if hits, _ := h.Svc.Chats().SearchSessions(context.Background(), "partial", 0); len(hits) != 0 {
		t.Errorf("the deleted turn is searchable: %+v", hits)
	}
	if live, _ := h.Svc.Store.LiveStreams(context.Background()); len(live) != 0 {
		t.Errorf("live streams: %+v", live)
	}
}

func TestRenameRefusesOverlongTitles(t *testing.T) {
	h := backendtest.New(t, "")
	sid := h.NewSession()
	if _, err := h.Svc.Chats().RenameSession(context.Background(), sid, strings.Repeat("é", backend.MaxTitleRunes+1)); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("overlong title: %v", err)
	}
	if s, err := h.Svc.Chats().RenameSession(context.Background(), sid, strings.Repeat("é", backend.MaxTitleRunes)); err != nil || s.Title == "" {
		t.Fatalf("title at the limit: %v", err)
	}
}

// TestHistoryKeptByFollowsTheChatsOrigin: the delete dialog's "Its history stays in
// <agent>" is said of a chat brought by the Hermes history import (bound to its Hermes
// session) and of one continued from an ACP agent's own session, and deleting either
// keeps that session; not of a web import (bound to nothing) nor of a continued chat
// that later moved runtimes (its new agent session is Talaria's own).
func TestHistoryKeptByFollowsTheChatsOrigin(t *testing.T) {
	svc, _ := openService(t)
	ctx := context.Background()
	keptBy := func(id string) string {
		t.Helper()
		by, err := svc.Chats().HistoryKeptBy(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return by
	}
	hermes, _, err := svc.Store.ImportChat(ctx, store.ImportedChat{Source: "hermes:hermes:20261204_abc", Title: "from Hermes",
		Runtime: "hermes", AgentSessionID: "20261204_abc", Messages: []store.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if by := keptBy(hermes.ID); by != "Hermes" {
		t.Errorf("a Hermes import: %q, want Hermes", by)
	}
	web, _, err := svc.Store.ImportChat(ctx, store.ImportedChat{Source: "web:w1", Title: "from the web",
		Messages: []store.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if by := keptBy(web.ID); by != "" {
		t.Errorf("a web import: %q, want none", by)
	}
	cont, err := svc.Store.CreateSession(ctx, store.NewSession{Title: "continued", Runtime: "acp:codex"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Store.SetAgentSessionFromAgent(ctx, cont.ID, "acp:codex", "s-cli"); err != nil {
		t.Fatal(err)
	}
	if by := keptBy(cont.ID); by != "codex" { // no agent of that id in Settings: its id
		t.Errorf("a continued chat: %q, want codex", by)
	}
	if err := svc.Store.SetSessionRuntime(ctx, cont.ID, "builtin"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Store.SetSessionRuntime(ctx, cont.ID, "acp:codex"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Store.SetAgentSession(ctx, cont.ID, "acp:codex", "s-talaria"); err != nil {
		t.Fatal(err)
	}
	if by := keptBy(cont.ID); by != "" {
		t.Errorf("a continued chat moved to a session Talaria made: %q, want none", by)
	}
	if err := svc.Chats().DeleteSession(ctx, hermes.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Chats().HistoryKeptBy(ctx, hermes.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted chat: %v, want ErrNotFound", err)
	}
}
