package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestTaskLifecycle(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	parent, err := s.CreateSession(ctx, NewSession{Title: "parent", Model: "m1", Workspace: "/work"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, NewTask{ParentSessionID: parent.ID, Prompt: "  "}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty prompt: %v", err)
	}
	if _, err := s.CreateTask(ctx, NewTask{ParentSessionID: "nope", Prompt: "x"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown parent: %v", err)
	}
	a, err := s.CreateTask(ctx, NewTask{ParentSessionID: parent.ID, Prompt: "first", Title: "first"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateTask(ctx, NewTask{ParentSessionID: parent.ID, Prompt: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != TaskQueued || a.SessionID == "" || a.CreatedAt == 0 || a.StartedAt != 0 {
		t.Fatalf("created = %+v", a)
	}
	hs := mustGet(t, s, a.SessionID)
	if !hs.Hidden || hs.ParentID != parent.ID || hs.Model != "m1" || hs.Workspace != "/work" || hs.Title != "first" {
		t.Fatalf("hidden session = %+v", hs)
	}
	if list, _ := s.ListSessions(ctx, 0, 0); len(list) != 1 || list[0].ID != parent.ID {
		t.Fatalf("ListSessions shows hidden sessions: %+v", list)
	}
	if open, _ := s.OpenTasks(ctx); len(open) != 2 || open[0].ID != a.ID || open[1].ID != b.ID {
		t.Fatalf("OpenTasks = %+v", open)
	}

	run, err := s.StartTask(ctx, a.ID, "stream-a")
	if err != nil || run.Status != TaskRunning || run.StreamID != "stream-a" || run.StartedAt == 0 {
		t.Fatalf("StartTask = %+v, %v", run, err)
	}
	if _, err := s.StartTask(ctx, a.ID, "again"); !errors.Is(err, ErrConflict) {
		t.Fatalf("second StartTask = %v", err)
	}
	done, changed, err := s.EndTask(ctx, a.ID, TaskCompleted, "the answer", "")
	if err != nil || !changed || done.Status != TaskCompleted || done.Result != "the answer" || done.EndedAt == 0 {
		t.Fatalf("EndTask = %+v %v %v", done, changed, err)
	}
	if again, changed, err := s.EndTask(ctx, a.ID, TaskFailed, "", "late"); err != nil || changed || again.Status != TaskCompleted {
		t.Fatalf("EndTask after the end = %+v %v %v", again, changed, err)
	}
	if _, _, err := s.EndTask(ctx, b.ID, TaskRunning, "", ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("EndTask(running) = %v", err)
	}
	if _, _, err := s.EndTask(ctx, b.ID, TaskStopped, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartTask(ctx, b.ID, "late"); !errors.Is(err, ErrConflict) {
		t.Fatalf("starting a stopped task = %v", err)
	}

	list, _ := s.ListTasks(ctx, parent.ID, false)
	if len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("ListTasks (newest first) = %+v", list)
	}
	if _, err := s.DismissTask(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListTasks(ctx, parent.ID, false); len(list) != 1 || list[0].ID != a.ID {
		t.Fatalf("ListTasks after dismiss = %+v", list)
	}
	if all, _ := s.ListTasks(ctx, parent.ID, true); len(all) != 2 {
		t.Fatalf("ListTasks with dismissed = %+v", all)
	}
	if got, err := s.Task(ctx, b.ID); err != nil || !got.Dismissed {
		t.Fatalf("Task = %+v, %v", got, err)
	}
	if _, err := s.Task(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Task(nope) = %v", err)
	}
	if open, _ := s.OpenTasks(ctx); len(open) != 0 {
		t.Fatalf("OpenTasks = %+v", open)
	}

	// b was dismissed and has ended, a copy belongs to nobody: both go; a stays.
	cp, err := s.ForkSession(ctx, ForkRequest{SessionID: parent.ID, Through: -1, Hidden: true})
	if err != nil {
		t.Fatal(err)
	}
	del, err := s.HiddenSessionsToDelete(ctx)
	if err != nil || len(del) != 2 || del[0] != b.SessionID || del[1] != cp.ID {
		t.Fatalf("HiddenSessionsToDelete = %v, %v (b %s, copy %s)", del, err, b.SessionID, cp.ID)
	}
	// Once the parent is deleted, its tasks' sessions go too.
	if err := s.DeleteSession(ctx, parent.ID); err != nil {
		t.Fatal(err)
	}
	if del, _ := s.HiddenSessionsToDelete(ctx); len(del) != 3 {
		t.Fatalf("after the parent's deletion: %v", del)
	}
}

func TestHiddenSessionsAreNotListedOrFound(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	visible := mustSession(t, s, "kubernetes visible")
	turn(t, s, visible.ID, "v1", "how do pods restart", "kubelet restarts pods")
	hidden, err := s.CreateSession(ctx, NewSession{Title: "kubernetes hidden", Hidden: true, ParentID: visible.ID})
	if err != nil {
		t.Fatal(err)
	}
	turn(t, s, hidden.ID, "h1", "kubernetes pods again", "kubelet again")
	if _, err := s.SetArchived(ctx, hidden.ID, true); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListSessions(ctx, 0, 0); len(list) != 1 || list[0].ID != visible.ID {
		t.Fatalf("list = %+v", list)
	}
	if arch, _ := s.ListArchivedSessions(ctx, 0, 0); len(arch) != 0 {
		t.Fatalf("archived list shows a hidden session: %+v", arch)
	}
	for _, q := range []string{"kubernetes", "kubelet", "pods", "hidden"} {
		hits, err := s.Search(ctx, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.SessionID == hidden.ID {
				t.Errorf("Search(%q) found the hidden session", q)
			}
		}
	}
	if hits, _ := s.Search(ctx, "kubelet", 10); len(hits) != 1 {
		t.Errorf("Search(kubelet) = %+v", hits)
	}
	if got := mustGet(t, s, hidden.ID); !got.Hidden || got.ParentID != visible.ID {
		t.Errorf("GetSession(hidden) = %+v", got)
	}
	if msgs := mustMessages(t, s, hidden.ID); len(msgs) != 2 {
		t.Errorf("Messages(hidden) = %+v", msgs)
	}
	checkFTS(t, s)
}

// A recovery keeps hidden sessions hidden and keeps the task records.
func TestRecoveryKeepsTasksAndHiddenSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	parent := mustSession(t, s, "parent")
	task, err := s.CreateTask(t.Context(), NewTask{ParentSessionID: parent.ID, Prompt: "do it"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartTask(t.Context(), task.ID, "st"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := recoverDatabase(t.Context(), path, []string{"test"}, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Task(t.Context(), task.ID)
	if err != nil || got.Status != TaskRunning || got.SessionID != task.SessionID || got.Prompt != "do it" {
		t.Fatalf("task after recovery = %+v, %v", got, err)
	}
	if hs := mustGet(t, s, task.SessionID); !hs.Hidden || hs.ParentID != parent.ID {
		t.Fatalf("hidden session after recovery = %+v", hs)
	}
	if list, _ := s.ListSessions(t.Context(), 0, 0); len(list) != 1 {
		t.Fatalf("list after recovery = %+v", list)
	}
}
