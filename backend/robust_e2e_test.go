package backend_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"talaria/backend/backendtest"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// What the attack of issue #10 found beyond the sandbox: one huge paste made a session
// unusable; journal frames were lost while another program held the database lock.

// TestHugePasteAndHistoryFit: a message over 1 MiB is refused before anything is
// saved; a history larger than the protocol's line limit (older rows saved before the
// limit) is cut to fit, the turn runs, and the window is told.
func TestHugePasteAndHistoryFit(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	sid := h.NewSession()
	_, err := h.Svc.Turns().StartTurn(ctx, sid, strings.Repeat("x", 2<<20))
	var tooLong *turn.MessageTooLongError
	if !errors.As(err, &tooLong) || !strings.Contains(err.Error(), "attach the text as a file") {
		t.Fatalf("a 2 MiB message: %v", err)
	}
	if msgs := h.Messages(sid); len(msgs) != 0 {
		t.Fatalf("the refused message was saved: %d rows", len(msgs))
	}
	// 20 saved turns of 1 MiB each: 20 MiB of history, over the 16 MiB line limit.
	big := strings.Repeat("y", 1<<20)
	for i := 0; i < 20; i++ {
		stream := "seed-" + string(rune('a'+i))
		if _, err := h.Svc.Store.AdmitTurn(ctx, sid, stream, store.Message{Role: "user", Content: big}); err != nil {
			t.Fatal(err)
		}
		if err := h.Svc.Store.SettleTurn(ctx, sid, stream, []store.Message{{Role: "assistant", Content: "ok " + stream, StreamID: stream}},
			protocol.Usage{}, "done"); err != nil {
			t.Fatal(err)
		}
	}
	h.Provider.Enqueue(providertest.TextTurn("Still here."))
	s := h.Start(sid, "are you there?")
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	w := backendtest.FramesOf(frames, protocol.EvWarning)
	if len(w) != 1 || w[0]["type"] != "history_trimmed" || !strings.Contains(w[0]["message"].(string), "too large to send whole") {
		t.Fatalf("warning = %v", w)
	}
	reqs := backendtest.StreamRequests(h.Provider.Requests())
	if len(reqs) != 1 || len(reqs[0].Body) > protocol.MaxLineBytes {
		t.Fatalf("%d requests, the last %d bytes", len(reqs), len(reqs[len(reqs)-1].Body))
	}
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	if last.Role != "user" || last.Content != "are you there?" {
		t.Fatalf("the new message did not reach the model: %+v", last)
	}
}

// TestJournalSurvivesALockedDatabase: another program holds the database's write lock
// for longer than the busy timeout (5 s) while a turn streams. No frame is lost: the
// journal ends up holding exactly what the window got.
//
// The lock is held until a journal write under it waited out the busy timeout and was
// refused (the app's log says so), and the turn's end is held at the provider until
// the lock is gone.
func TestJournalSurvivesALockedDatabase(t *testing.T) {
	t.Parallel() // it waits 5 s on SQLite's busy timeout; nothing else is shared
	h := backendtest.New(t, "")
	sid := h.NewSession()
	during, openDuring := backendtest.Release()
	after, openAfter := backendtest.Release()
	t.Cleanup(openDuring)
	t.Cleanup(openAfter)
	var chunks []providertest.Chunk
	for i := 0; i < 40; i++ {
		c := providertest.Chunk{Text: "word" + string(rune('A'+i%26)) + " "}
		switch i {
		case 1:
			c.Wait = during // the words streamed while the database is locked
		case 20:
			c.Wait = after // the rest, and the turn's end, once it is free again
		}
		chunks = append(chunks, c)
	}
	h.Provider.Enqueue(providertest.Turn{Chunks: chunks}, providertest.TextTurn("Title"))
	s := h.Start(sid, "write slowly")
	h.WaitEvent(s, protocol.EvToken)

	other, err := sql.Open("sqlite3", "file:"+h.Svc.Paths.DBPath+"?_busy_timeout=100")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatalf("taking the lock: %v", err)
	}
	openDuring()
	testwait.For(t, "a journal write refused by the lock", func() bool {
		b, _ := os.ReadFile(h.Svc.Paths.AppLog)
		return strings.Contains(string(b), "journal write failed; keeping the frames to write later")
	})
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	openAfter()

	live := h.WaitEnd(s)
	var journal []turn.Frame
	testwait.Until(func() bool {
		journal, _ = h.Svc.Turns().StreamSince(context.Background(), s, 0)
		return len(journal) == len(live)
	})
	if len(journal) != len(live) {
		t.Fatalf("journal has %d frames, the window got %d", len(journal), len(live))
	}
	for i := range live {
		if journal[i].Seq != live[i].Seq || journal[i].Event != live[i].Event || !backendtest.JSONEqual(journal[i].Data, live[i].Data) {
			t.Fatalf("frame %d: journal %s %s, live %s %s", i, journal[i].Event, journal[i].Data, live[i].Event, live[i].Data)
		}
	}
	text := backendtest.TextOf(journal, protocol.EvToken)
	if !strings.HasPrefix(text, "wordA ") || strings.Count(text, "word") != 40 {
		t.Fatalf("text from the journal: %q", text)
	}
	var done map[string]any
	json.Unmarshal(live[len(live)-2].Data, &done)
	_ = done
}
