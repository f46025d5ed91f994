package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"talaria/backend/bus"
	"talaria/backend/history"
	"talaria/backend/store"
	"talaria/internal/testwait"
)

// A Talaria web folder in the shapes of the seeds (004: sessions/<sid>.json beside
// sessions/_index.json and the deleted-session tombstone; 001/002: the rows of a
// turn), with what such a folder holds in real life: a damaged file, a copy of a
// session under another name, a file with a bad row, a deleted session, a .bak, an
// index row whose file is gone.
func writeWebFolder(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	put := func(name string, v any) {
		t.Helper()
		var b []byte
		if s, ok := v.(string); ok {
			b = []byte(s)
		} else {
			var err error
			if b, err = json.MarshalIndent(v, "", "  "); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s1 := map[string]any{
		"session_id": "s1", "title": "Paddock census", "created_at": 1_700_000_000, "updated_at": 1_700_000_060.5,
		"message_count": 4, "profile": nil, "workspace": "/home/me/farm", "model": "gpt-x", "pinned": true,
		"messages": []any{
			map[string]any{"role": "user", "content": "count the zebras in the paddock", "timestamp": 1_700_000_001, "_turn_id": "t1"},
			map[string]any{"role": "assistant", "content": "", "reasoning": "I should list it.", "timestamp": 1_700_000_002,
				"tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
					"function": map[string]any{"name": "terminal", "arguments": `{"command":"ls paddock"}`}}}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "name": "terminal", "content": "zebra-1 zebra-2 okapi-7",
				"timestamp": 1_700_000_003},
			map[string]any{"role": "assistant", "content": "Two zebras and an okapi.", "timestamp": 1_700_000_004},
		},
		"tool_calls": []any{map[string]any{"name": "terminal", "tid": "call_1"}}, // the display summary: not read
	}
	put("s1.json", s1)
	put("s1.json.bak", s1)
	put("s1 (1).json", s1) // a copy under another name
	put("s2.json", map[string]any{
		"session_id": "s2", "title": "Archived musings", "created_at": 1_690_000_000, "updated_at": 1_690_000_100, "archived": true,
		"messages": []any{
			map[string]any{"role": "user", "content": "tell me about quokkas", "timestamp": 1_690_000_001},
			map[string]any{"role": "assistant", "content": "**Provider error:** overloaded", "_error": true, "timestamp": 1_690_000_002},
			map[string]any{"role": "user", "content": "again", "timestamp": 1_690_000_003},
			map[string]any{"role": "assistant", "content": "", "_error": true, "_terminal_state": "cancelled", "timestamp": 1_690_000_004},
		},
	})
	put("s3.json", map[string]any{
		"session_id": "s3", "title": nil, "created_at": 1_680_000_000, "updated_at": 1_680_000_010,
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "what is in this photo of a narwhal"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:..."}}}},
			map[string]any{"role": "assistant", "content": "A narwhal, tusk and all."},
		},
	})
	put("broken.json", `{"session_id": "broken", "title": "Half written", "messages": [{"role": "user", "content": "platypus`)
	put("bad-row.json", map[string]any{
		"session_id": "bad-row", "title": "Bad row", "created_at": 1_700_000_000,
		"messages": []any{
			map[string]any{"role": "user", "content": "the axolotl question"},
			map[string]any{"role": "assistant", "content": "an axolotl answer"},
			map[string]any{"role": "narrator", "content": "meanwhile the axolotl slept"},
		},
	})
	put("gone.json", map[string]any{"session_id": "gone", "title": "Deleted one", "messages": []any{
		map[string]any{"role": "user", "content": "the deleted capybara"}}})
	put("_deleted_webui_sessions.json", map[string]any{"version": 1, "ids": []string{"gone"}})
	put("_index.json", []any{
		map[string]any{"session_id": "s1", "title": "Paddock census", "updated_at": 1_700_000_060, "message_count": 4},
		map[string]any{"session_id": "s2", "updated_at": 1_690_000_100, "message_count": 4},
		map[string]any{"session_id": "s3", "updated_at": 1_680_000_010, "message_count": 2, "pinned": true},
		map[string]any{"session_id": "lost", "updated_at": 1_600_000_000, "message_count": 9},
	})
	return root
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// progressLog records every progress event an import publishes.
type progressLog struct {
	mu     sync.Mutex
	events []history.Progress
}

func (l *progressLog) subscribe(t *testing.T, b *bus.Bus) {
	t.Cleanup(b.Subscribe(func(ev bus.Event) {
		if p, ok := ev.Payload.(history.Progress); ok && ev.Name == history.EventProgress {
			l.mu.Lock()
			l.events = append(l.events, p)
			l.mu.Unlock()
		}
	}))
}

func problemsOf(p history.Progress) map[string]string {
	out := map[string]string{}
	for _, pr := range p.Problems {
		out[pr.Item] = pr.Outcome + ": " + pr.Message
	}
	return out
}

func TestWebFolderImport(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	b := bus.New()
	var log progressLog
	log.subscribe(t, b)
	im := history.New(st, b, nil)
	folder := writeWebFolder(t)

	p, err := im.RunWeb(ctx, history.WebRequest{Folder: folder})
	if err != nil {
		t.Fatal(err)
	}
	// 7 session files (s1, its copy, s2, s3, broken, bad-row, gone) and the index's
	// "lost", whose file is missing.
	if p.State != history.StateDone || p.Total != 8 || p.Imported != 3 || p.Skipped != 3 || p.Failed != 2 {
		t.Fatalf("progress %+v", p)
	}
	probs := problemsOf(p)
	for item, want := range map[string]string{
		"broken.json":  "failed: cannot import this file: not a JSON object",
		"bad-row.json": `failed: cannot import this file: messages[2].role: unknown role "narrator"`,
		"s1 (1).json":  "skipped: a duplicate of s1.json",
		"gone.json":    "skipped: deleted in Talaria web",
		"lost.json":    "skipped: listed in _index.json but its file is not in the folder",
	} {
		if !strings.HasPrefix(probs[item], want) {
			t.Errorf("problem of %s = %q; want it to start with %q", item, probs[item], want)
		}
	}
	// Progress was published with a count after every file, ending with the final one.
	log.mu.Lock()
	events := append([]history.Progress(nil), log.events...)
	log.mu.Unlock()
	last := events[len(events)-1]
	if last.State != history.StateDone || last.Imported != 3 || last.EndedAt == 0 {
		t.Errorf("last event %+v", last)
	}
	counted := 0
	for i := 1; i < len(events); i++ {
		a, z := events[i-1], events[i]
		if z.Imported+z.Skipped+z.Failed < a.Imported+a.Skipped+a.Failed {
			t.Errorf("the count went back: %+v then %+v", a, z)
		}
		if z.Imported+z.Skipped+z.Failed == a.Imported+a.Skipped+a.Failed+1 {
			counted++
		}
	}
	if counted != 8 {
		t.Errorf("%d events moved the count by one; want 8 (one per item)", counted)
	}

	sessions, err := st.ListSessions(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	archived, err := st.ListArchivedSessions(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]store.Session{}
	for _, s := range append(sessions, archived...) {
		byTitle[s.Title] = s
	}
	if len(byTitle) != 3 {
		t.Fatalf("sessions %+v", byTitle)
	}
	s1 := byTitle["Paddock census"]
	if !s1.Pinned || s1.ArchivedAt != 0 || s1.CreatedAt != 1_700_000_000_000 || s1.UpdatedAt != 1_700_000_060_500 ||
		s1.Workspace != "/home/me/farm" || s1.Model != "gpt-x" || s1.Runtime != store.RuntimeBuiltin {
		t.Errorf("s1 %+v", s1)
	}
	rows, err := st.Messages(ctx, s1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[1].Role != "assistant" || len(rows[1].ToolCalls) != 1 || rows[1].ToolCalls[0].ID != "call_1" ||
		rows[1].ToolCalls[0].Function.Arguments != `{"command":"ls paddock"}` || rows[1].Reasoning != "I should list it." ||
		rows[2].Role != "tool" || rows[2].ToolCallID != "call_1" || rows[2].Content != "zebra-1 zebra-2 okapi-7" ||
		rows[0].CreatedAt != 1_700_000_001_000 || rows[3].CreatedAt != 1_700_000_004_000 {
		b, _ := json.Marshal(rows)
		t.Errorf("s1 rows %s", b)
	}
	s2 := byTitle["Archived musings"]
	if s2.ArchivedAt != 1_690_000_100_000 || s2.Pinned {
		t.Errorf("s2 %+v", s2)
	}
	rows, _ = st.Messages(ctx, s2.ID)
	if len(rows) != 4 || rows[1].Kind != store.KindError || rows[3].Kind != store.KindCancelled {
		t.Errorf("s2 rows %+v", rows)
	}
	s3 := byTitle["Untitled"]
	if !s3.Pinned { // from the index: the file does not say
		t.Errorf("s3 %+v", s3)
	}
	rows, _ = st.Messages(ctx, s3.ID)
	if len(rows) != 2 || rows[0].Content != "what is in this photo of a narwhal\n[image_url]" {
		t.Errorf("s3 rows %+v", rows)
	}
	// Search finds imported text at once (a tool's output too); nothing of the files
	// that failed or were skipped is there.
	for q, want := range map[string]string{"okapi": s1.ID, "quokkas": s2.ID, "narwhal": s3.ID, "axolotl": "", "platypus": "", "capybara": ""} {
		hits, err := st.Search(ctx, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == "" && len(hits) != 0:
			t.Errorf("Search(%q) = %+v; want nothing", q, hits)
		case want != "" && (len(hits) == 0 || hits[0].SessionID != want):
			t.Errorf("Search(%q) = %+v; want %s", q, hits, want)
		}
	}

	// A second import adds nothing.
	again, err := im.RunWeb(ctx, history.WebRequest{Folder: filepath.Join(folder, "sessions")})
	if err != nil {
		t.Fatal(err)
	}
	if again.Imported != 0 || again.Skipped != 6 || again.Failed != 2 || again.State != history.StateDone {
		t.Errorf("second import %+v", again)
	}
	if n := len(mustList(t, st)); n != 2 { // s2 is archived
		t.Errorf("%d listed sessions after the second import", n)
	}
}

func mustList(t *testing.T, st *store.Store) []store.Session {
	t.Helper()
	l, err := st.ListSessions(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestWebFolderRefusesWhatIsNotOne(t *testing.T) {
	st := openStore(t)
	im := history.New(st, bus.New(), nil)
	empty := t.TempDir()
	file := filepath.Join(empty, "x.txt")
	os.WriteFile(file, []byte("hi"), 0o600) //nolint:errcheck
	for name, folder := range map[string]string{"missing": filepath.Join(empty, "nope"), "no sessions": empty, "a file": file} {
		p, err := im.RunWeb(t.Context(), history.WebRequest{Folder: folder})
		if err != nil || p.State != history.StateFailed || !strings.Contains(p.Error, "choose Talaria web's data folder") {
			t.Errorf("%s: %+v, %v", name, p, err)
		}
	}
	if _, err := im.RunWeb(t.Context(), history.WebRequest{}); err == nil {
		t.Error("an empty folder name was accepted")
	}
}

// Cancel stops between two conversations: the one being written is whole, nothing
// after it is started.
func TestWebFolderImportCancels(t *testing.T) {
	root := t.TempDir()
	for i := range 30 {
		doc := fmt.Sprintf(`{"session_id":"c%02d","title":"Chat %d","created_at":1700000000,"messages":[{"role":"user","content":"hello wombat %d"}]}`, i, i, i)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("c%02d.json", i)), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st := openStore(t)
	b := bus.New()
	im := history.New(st, b, nil)
	var once sync.Once
	t.Cleanup(b.Subscribe(func(ev bus.Event) {
		if p, ok := ev.Payload.(history.Progress); ok && p.Imported == 1 {
			once.Do(func() {
				if _, ok := im.Cancel(p.JobID); !ok {
					t.Errorf("Cancel(%s) found no running import", p.JobID)
				}
			})
		}
	}))
	p, err := im.RunWeb(t.Context(), history.WebRequest{Folder: root})
	if err != nil {
		t.Fatal(err)
	}
	if p.State != history.StateCancelled || p.Imported != 1 || p.Total != 30 || p.Failed != 0 {
		t.Errorf("progress %+v", p)
	}
	if n := len(mustList(t, st)); n != 1 {
		t.Errorf("%d sessions after a cancelled import; want 1", n)
	}
	if _, ok := im.Cancel(p.JobID); ok {
		t.Error("Cancel of an ended import succeeded")
	}
	// The next import brings the rest, not the first one again.
	rest, err := im.RunWeb(context.Background(), history.WebRequest{Folder: root})
	if err != nil || rest.Imported != 29 || rest.Skipped != 1 {
		t.Errorf("the next import: %+v, %v", rest, err)
	}
}

// Close (the app's shutdown) cancels a running import and returns once it has ended:
// the chat being written is whole, nothing after it is started.
func TestImporterCloseEndsTheRunningImport(t *testing.T) {
	root := t.TempDir()
	for i := range 5 {
		doc := fmt.Sprintf(`{"session_id":"d%d","created_at":1700000000,"messages":[{"role":"user","content":"hi numbat %d"}]}`, i, i)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("d%d.json", i)), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st := openStore(t)
	b := bus.New()
	im := history.New(st, b, nil)
	reached, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	t.Cleanup(b.Subscribe(func(ev bus.Event) {
		if p, ok := ev.Payload.(history.Progress); ok && p.Imported == 1 {
			once.Do(func() {
				reached <- struct{}{}
				<-release // the import holds here, after its first chat was committed
			})
		}
	}))
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo) // runs before the unsubscribe: a failed test never leaves the import held
	if _, err := im.StartWeb(history.WebRequest{Folder: root}); err != nil {
		t.Fatal(err)
	}
	if _, err := im.StartWeb(history.WebRequest{Folder: root}); !errors.Is(err, history.ErrRunning) {
		t.Errorf("a second start while one runs: %v", err)
	}
	testwait.Recv(t, reached, "the first imported chat")
	closed := make(chan struct{}, 1)
	go func() {
		im.Close(context.Background())
		closed <- struct{}{}
	}()
	testwait.For(t, "Close to cancel the import", func() bool { return im.Status().CancelRequested })
	letGo()
	testwait.Recv(t, closed, "Close to return")
	p := im.Status()
	if p.State != history.StateCancelled || p.Imported != 1 || p.EndedAt == 0 {
		t.Errorf("after Close: %+v", p)
	}
	if n := len(mustList(t, st)); n != 1 {
		t.Errorf("%d chats after Close; want 1", n)
	}
}
