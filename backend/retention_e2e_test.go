package backend_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/store"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The app prunes the journal by itself, in the background at start-up: a chat whose
// turns all ended long ago keeps the frames of its newest store.JournalKeepPerSession
// turns only, and the transcript stays whole.
func TestJournalIsPrunedAtStartup(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	dbPath := filepath.Join(dir, "talaria.db")
	st, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.CreateSession(ctx, store.NewSession{Title: "old chat"})
	if err != nil {
		t.Fatal(err)
	}
	const turns = store.JournalKeepPerSession + 3
	for i := range turns {
		id := fmt.Sprintf("st-%02d", i)
		if _, err := st.AdmitTurn(ctx, sess.ID, id, store.Message{Content: "q"}); err != nil {
			t.Fatal(err)
		}
		if err := st.AppendJournal(ctx, store.JournalFrame{StreamID: id, SessionID: sess.ID, Seq: 1, Event: protocol.EvToken,
			Data: json.RawMessage(`{"text":"a"}`)}); err != nil {
			t.Fatal(err)
		}
		if err := st.SettleTurn(ctx, sess.ID, id, []store.Message{{Role: "assistant", Content: "a"}}, protocol.Usage{}, store.TerminalDone); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Every turn ended 40 days ago (a minute apart, st-00 first).
	db, err := sql.Open("sqlite3", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-40 * 24 * time.Hour).UnixMilli()
	if _, err := db.Exec(`UPDATE streams SET started_at = ? + CAST(substr(stream_id, 4) AS INTEGER) * 60000,
		ended_at = ? + CAST(substr(stream_id, 4) AS INTEGER) * 60000 + 1000`, old, old); err != nil {
		t.Fatal(err)
	}
	db.Close()

	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.DataDir = dir })
	frames := func(id string) int {
		fs, err := h.Svc.Turns().StreamSince(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(fs)
	}
	if !testwait.Until(func() bool { return frames("st-02") == 0 }) {
		t.Fatal("the journal was not pruned at start-up")
	}
	for i := range turns {
		want := 1
		if i < turns-store.JournalKeepPerSession {
			want = 0
		}
		if got := frames(fmt.Sprintf("st-%02d", i)); got != want {
			t.Errorf("st-%02d has %d frames, want %d", i, got, want)
		}
	}
	if n := len(h.Messages(sess.ID)); n != 2*turns {
		t.Errorf("the transcript has %d rows, want %d", n, 2*turns)
	}
}

// Empty chats do not pile up: the ones a previous run left empty are gone at start-up
// (one with a draft stays), and a new chat left before its first message is discarded,
// while one with a message is not.
func TestEmptyChatsDoNotPileUp(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	left, err := st.CreateSession(ctx, store.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	drafted, err := st.CreateSession(ctx, store.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveDraft(ctx, drafted.ID, "remember to ask about"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.DataDir = dir })
	list, err := h.Svc.Chats().ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != drafted.ID {
		t.Fatalf("after start-up the sidebar lists %+v; want only the chat with a draft (not %s)", list, left.ID)
	}

	fresh := h.NewSession()
	if gone, err := h.Svc.Chats().DiscardIfEmpty(ctx, fresh); err != nil || !gone {
		t.Fatalf("DiscardIfEmpty(new chat) = %v, %v", gone, err)
	}
	used := h.NewSession()
	h.Provider.Enqueue(providertest.TextTurn("hi"))
	h.WaitEnd(h.Start(used, "hello"))
	if gone, err := h.Svc.Chats().DiscardIfEmpty(ctx, used); err != nil || gone {
		t.Fatalf("DiscardIfEmpty(chat with a message) = %v, %v", gone, err)
	}
	list, _ = h.Svc.Chats().ListSessions(ctx)
	if len(list) != 2 {
		t.Fatalf("sidebar = %+v; want the drafted and the used chat", list)
	}
}
