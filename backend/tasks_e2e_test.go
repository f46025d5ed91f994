package backend_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/backend/tasks"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// End-to-end tests of background tasks and side questions: the real sidecar process,
// the scripted provider and a real SQLite file (see e2e_test.go).
//
// A plain HTTP 500 is retried by the runtime before it fails, so a failing turn is
// scripted as an error object with code 500 inside the stream after some text, which
// fails at once.
func failingTurn(text string) providertest.Turn {
	return providertest.Turn{Chunks: []providertest.Chunk{{Text: text}, providertest.ErrorChunk(500, "upstream exploded")}}
}

// taskUpdates records the background_tasks events.
type taskUpdates struct {
	mu  sync.Mutex
	got []tasks.Update
}

func watchTasks(b *bus.Bus) *taskUpdates {
	u := &taskUpdates{}
	b.Subscribe(func(ev bus.Event) {
		if ev.Name != bus.EventBackgroundTasks {
			return
		}
		u.mu.Lock()
		u.got = append(u.got, ev.Payload.(tasks.Update))
		u.mu.Unlock()
	})
	return u
}

// statuses lists, in order, every status the events showed for a task (repeats
// folded).
func (u *taskUpdates) statuses(taskID string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, up := range u.got {
		for _, t := range up.Tasks {
			if t.ID == taskID && (len(out) == 0 || out[len(out)-1] != t.Status) {
				out = append(out, t.Status)
			}
		}
	}
	return out
}

// waitStatuses waits until the events showed exactly want (comma-separated) for a task.
func (u *taskUpdates) waitStatuses(t *testing.T, taskID, want string) {
	t.Helper()
	got, ok := "", false
	testwait.Until(func() bool {
		got = strings.Join(u.statuses(taskID), ",")
		ok = got == want
		return ok || !strings.HasPrefix(want, got)
	})
	if !ok {
		t.Fatalf("background_tasks events showed %q for %s, want %q", got, taskID, want)
	}
}

// waitSeen waits until an event showed a task for which ok holds.
func (u *taskUpdates) waitSeen(t *testing.T, taskID, what string, ok func(tasks.Task) bool) {
	t.Helper()
	if !testwait.Until(func() bool { return u.seen(taskID, ok) }) {
		t.Fatalf("no background_tasks event showed task %s %s", taskID, what)
	}
}

// seen reports whether an event showed a task for which ok holds.
func (u *taskUpdates) seen(taskID string, ok func(tasks.Task) bool) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, up := range u.got {
		for _, t := range up.Tasks {
			if t.ID == taskID && ok(t) {
				return true
			}
		}
	}
	return false
}

// waitTask polls the parent's list until the task satisfies ok, and returns it.
func waitTask(t *testing.T, svc *backend.Service, parent, taskID, what string, ok func(tasks.Task) bool) tasks.Task {
	t.Helper()
	var last []tasks.Task
	var found tasks.Task
	if !testwait.Until(func() bool {
		list, err := svc.Tasks.List(context.Background(), parent)
		if err != nil {
			t.Fatal(err)
		}
		last = list
		for _, tk := range list {
			if tk.ID == taskID && ok(tk) {
				found = tk
				return true
			}
		}
		return false
	}) {
		t.Fatalf("task %s never %s; list: %+v", taskID, what, last)
	}
	return found
}

// awaitRequests waits until the provider received n chat requests.
func awaitRequests(p *providertest.Server, n int) bool {
	return testwait.Until(func() bool { return len(p.Requests()) >= n })
}

func status(s string) func(tasks.Task) bool { return func(t tasks.Task) bool { return t.Status == s } }

// waitGone waits until session id is deleted.
func waitGone(t *testing.T, svc *backend.Service, id string) {
	t.Helper()
	var err error
	if !testwait.Until(func() bool {
		_, err = svc.Store.GetSession(context.Background(), id)
		return errors.Is(err, store.ErrNotFound)
	}) {
		t.Fatalf("hidden session %s was not deleted (%v)", id, err)
	}
}

// noHiddenLeft checks that no hidden session is left that nothing needs (a side
// question's copy would be one).
func noHiddenLeft(t *testing.T, svc *backend.Service) {
	t.Helper()
	left, err := svc.Store.HiddenSessionsToDelete(context.Background())
	if err != nil || len(left) != 0 {
		t.Fatalf("hidden sessions left behind: %v, %v", left, err)
	}
}

func TestBackgroundTaskLifecycle(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	updates := watchTasks(h.Svc.Bus)
	parent := h.NewSession()

	// Start and complete: the result is the final assistant text, the parent's own
	// transcript and the sidebar do not change, and no title request is made.
	h.Provider.Enqueue(providertest.TextTurn("All ", "tests pass."))
	task, err := h.Svc.Tasks.Start(ctx, parent, "  run the test suite\nand report  ")
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != store.TaskRunning || task.Prompt != "run the test suite\nand report" || task.SessionID == "" ||
		task.ParentSessionID != parent || task.StreamID == "" || task.StartedAt == 0 {
		t.Fatalf("started task = %+v", task)
	}
	done := waitTask(t, h.Svc, parent, task.ID, "completed", status(store.TaskCompleted))
	if done.ResultPreview != "All tests pass." || done.EndedAt < done.StartedAt || done.Error != "" {
		t.Fatalf("completed task = %+v", done)
	}
	res, err := h.Svc.Tasks.Result(ctx, task.ID)
	if err != nil || res.Text != "All tests pass." || res.Status != store.TaskCompleted || res.SessionID != task.SessionID {
		t.Fatalf("Result = %+v, %v", res, err)
	}
	h.CheckFrames(task.StreamID, h.WaitEnd(task.StreamID), protocol.EvDone)
	updates.waitStatuses(t, task.ID, "running,completed")
	if msgs := h.Messages(parent); len(msgs) != 0 {
		t.Fatalf("the parent's transcript changed: %+v", msgs)
	}
	list, _ := h.Svc.Chats().ListSessions(ctx)
	if len(list) != 1 || list[0].ID != parent {
		t.Fatalf("ListSessions shows the hidden session: %+v", list)
	}
	if hits, _ := h.Svc.Chats().SearchSessions(ctx, "tests pass", 10); len(hits) != 0 {
		t.Fatalf("search finds the hidden session: %+v", hits)
	}
	hv, err := h.Svc.Chats().GetSession(ctx, task.SessionID)
	if err != nil || !hv.Session.Hidden || hv.Session.ParentID != parent || len(hv.Messages) != 2 ||
		hv.Messages[1].Content != "All tests pass." {
		t.Fatalf("hidden session = %+v, %v", hv, err)
	}
	if n := len(h.Provider.Requests()); n != 1 {
		t.Fatalf("%d provider requests for one task turn (a title was asked for?)", n)
	}

	// Fail: the label and message are recorded.
	h.Provider.Enqueue(failingTurn("half "))
	failed, err := h.Svc.Tasks.Start(ctx, parent, "deploy it")
	if err != nil {
		t.Fatal(err)
	}
	failed = waitTask(t, h.Svc, parent, failed.ID, "failed", status(store.TaskFailed))
	if !strings.Contains(failed.Error, "upstream exploded") || failed.ResultPreview != "half " {
		t.Fatalf("failed task = %+v", failed)
	}

	// Stop: the turn is cancelled and its partial text kept.
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "partial work"}}, HangAfter: true})
	hung, err := h.Svc.Tasks.Start(ctx, parent, "refactor everything")
	if err != nil {
		t.Fatal(err)
	}
	h.WaitText(hung.StreamID, "partial work")
	if err := h.Svc.Tasks.Stop(ctx, hung.ID); err != nil {
		t.Fatal(err)
	}
	stopped := waitTask(t, h.Svc, parent, hung.ID, "stopped", status(store.TaskStopped))
	if r, _ := h.Svc.Tasks.Result(ctx, hung.ID); r.Text != "partial work" || stopped.EndedAt == 0 {
		t.Fatalf("stopped task = %+v, result %+v", stopped, r)
	}
	if err := h.Svc.Tasks.Stop(ctx, hung.ID); err != nil {
		t.Fatalf("stopping a stopped task: %v", err)
	}

	// The list: newest first.
	all, _ := h.Svc.Tasks.List(ctx, parent)
	if len(all) != 3 || all[0].ID != hung.ID || all[1].ID != failed.ID || all[2].ID != task.ID {
		t.Fatalf("List = %+v", all)
	}

	// Dismiss: gone from the list, hidden session deleted, result still readable.
	if err := h.Svc.Tasks.Dismiss(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Svc.Chats().GetSession(ctx, task.SessionID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("hidden session after dismiss: %v", err)
	}
	if all, _ := h.Svc.Tasks.List(ctx, parent); len(all) != 2 {
		t.Fatalf("List after dismiss = %+v", all)
	}
	if r, err := h.Svc.Tasks.Result(ctx, task.ID); err != nil || r.Text != "All tests pass." {
		t.Fatalf("Result after dismiss = %+v, %v", r, err)
	}
	if err := h.Svc.Tasks.Dismiss(ctx, "no-such-task"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Dismiss(unknown) = %v", err)
	}

	// Refused at once (no model): an error, and nothing is left behind.
	if _, err := h.Svc.Tasks.Start(ctx, parent, "   "); !errors.Is(err, turn.ErrEmptyMessage) {
		t.Fatalf("empty prompt: %v", err)
	}
	if _, err := h.Svc.Tasks.Start(ctx, "no-such-session", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown parent: %v", err)
	}
	if _, err := h.Svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: h.Provider.BaseURL()}); err != nil {
		t.Fatal(err)
	}
	var nc *turn.NotConfiguredError
	if _, err := h.Svc.Tasks.Start(ctx, parent, "no model"); !errors.As(err, &nc) {
		t.Fatalf("Start without a model = %v", err)
	}
	if all, _ := h.Svc.Tasks.List(ctx, parent); len(all) != 2 {
		t.Fatalf("a refused task is listed: %+v", all)
	}
	noHiddenLeft(t, h.Svc)

	// Deleting the parent dismisses its tasks and deletes their sessions.
	if err := h.Svc.Chats().DeleteSession(ctx, parent); err != nil {
		t.Fatal(err)
	}
	waitGone(t, h.Svc, failed.SessionID)
	waitGone(t, h.Svc, hung.SessionID)
}

func TestBackgroundTasksQueueOverTheLimit(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	updates := watchTasks(h.Svc.Bus)
	parent := h.NewSession()

	if got := h.Svc.Tasks.MaxRunning(ctx); got != tasks.DefaultMaxRunning {
		t.Fatalf("default limit %d", got)
	}
	for _, bad := range []int{0, 11, -1} {
		if err := h.Svc.Tasks.SetMaxRunning(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("SetMaxRunning(%d) = %v", bad, err)
		}
	}
	if err := h.Svc.Tasks.SetMaxRunning(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The first answer is held by the provider until the queue was looked at (a fixed
	// delay could end first on a loaded machine, and the second task would run at
	// once); the second task waits for it, visibly.
	hold := make(chan struct{})
	var holdOnce sync.Once
	release := func() { holdOnce.Do(func() { close(hold) }) }
	t.Cleanup(release)
	h.Provider.Enqueue(
		providertest.Turn{Chunks: []providertest.Chunk{{Text: "first "}, {Text: "done", Wait: hold}}},
		providertest.TextTurn("second done"))
	first, err := h.Svc.Tasks.Start(ctx, parent, "first job")
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.Svc.Tasks.Start(ctx, parent, "second job")
	if err != nil {
		t.Fatal(err)
	}
	third, err := h.Svc.Tasks.Start(ctx, parent, "third job")
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != store.TaskRunning || second.Status != store.TaskQueued || second.QueuePosition != 1 ||
		second.StreamID != "" || third.QueuePosition != 2 {
		t.Fatalf("first %+v\nsecond %+v\nthird %+v", first, second, third)
	}
	updates.waitSeen(t, second.ID, "queued first", func(t tasks.Task) bool { return t.Status == store.TaskQueued && t.QueuePosition == 1 })
	// A queued task leaves the queue when stopped; the next one moves up.
	if err := h.Svc.Tasks.Stop(ctx, third.ID); err != nil {
		t.Fatal(err)
	}
	if s := waitTask(t, h.Svc, parent, third.ID, "stopped", status(store.TaskStopped)); s.StartedAt != 0 || s.QueuePosition != 0 {
		t.Fatalf("stopped while queued: %+v", s)
	}
	release()
	a := waitTask(t, h.Svc, parent, first.ID, "completed", status(store.TaskCompleted))
	b := waitTask(t, h.Svc, parent, second.ID, "completed", status(store.TaskCompleted))
	if b.StartedAt < a.EndedAt || b.ResultPreview != "second done" {
		t.Fatalf("second started at %d, first ended at %d; second = %+v", b.StartedAt, a.EndedAt, b)
	}
	updates.waitStatuses(t, second.ID, "queued,running,completed")
	if got := h.Svc.Tasks.MaxRunning(ctx); got != 1 {
		t.Fatalf("limit = %d", got)
	}
}

// openServiceAt opens and starts a Service on dir with the scripted provider p (the
// test closes it).
func openServiceAt(t *testing.T, dir string, p *providertest.Server) *backend.Service {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: dir, Version: "test", SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"}, Keyring: vault.NewMemoryKeyring(),
		Supervisor: backendtest.SupervisorConfig})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Settings().SaveSettings(context.Background(), backend.SettingsInput{
		ProviderName: "scripted", BaseURL: p.BaseURL(), Model: "scripted-model"}); err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestBackgroundTasksSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	p := providertest.Start()
	t.Cleanup(p.Close)
	ctx := context.Background()

	svc := openServiceAt(t, dir, p)
	sess, err := svc.Chats().NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parent := sess.ID
	if err := svc.Tasks.SetMaxRunning(ctx, 1); err != nil {
		t.Fatal(err)
	}
	p.Enqueue(providertest.TextTurn("early result"))
	early, err := svc.Tasks.Start(ctx, parent, "early job")
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, svc, parent, early.ID, "completed", status(store.TaskCompleted))
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "never finished"}}, HangAfter: true})
	running, err := svc.Tasks.Start(ctx, parent, "long job")
	if err != nil {
		t.Fatal(err)
	}
	if !awaitRequests(p, 2) {
		t.Fatal("the long job never reached the provider")
	}
	queued, err := svc.Tasks.Start(ctx, parent, "queued job")
	if err != nil || queued.Status != store.TaskQueued {
		t.Fatalf("queued = %+v, %v", queued, err)
	}
	backendtest.Close(t, svc)

	// A side question's copy left behind by a crash is deleted at the next start.
	st, err := store.Open(ctx, filepath.Join(dir, "talaria.db"))
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := st.ForkSession(ctx, store.ForkRequest{SessionID: parent, Through: -1, Hidden: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Task(ctx, running.ID); got.Status != store.TaskRunning {
		t.Fatalf("after quitting, the long job is %s (want it left running)", got.Status)
	}
	st.Close()

	p.Enqueue(providertest.TextTurn("queued result"))
	svc2 := openServiceAt(t, dir, p)
	defer backendtest.Close(t, svc2)
	if got := svc2.Tasks.MaxRunning(ctx); got != 1 {
		t.Fatalf("limit after restart = %d", got)
	}
	r := waitTask(t, svc2, parent, running.ID, "failed", status(store.TaskFailed))
	if r.Error != tasks.InterruptedError {
		t.Fatalf("interrupted task = %+v", r)
	}
	q := waitTask(t, svc2, parent, queued.ID, "completed", status(store.TaskCompleted))
	if q.ResultPreview != "queued result" {
		t.Fatalf("queued task after restart = %+v", q)
	}
	if e, err := svc2.Tasks.Result(ctx, early.ID); err != nil || e.Text != "early result" {
		t.Fatalf("early task after restart = %+v, %v", e, err)
	}
	if list, _ := svc2.Tasks.List(ctx, parent); len(list) != 3 {
		t.Fatalf("tasks after restart = %+v", list)
	}
	if _, err := svc2.Store.GetSession(ctx, orphan.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the orphan copy survived the start: %v", err)
	}
	// The interrupted task's hidden session is still there to look at, and idle.
	if hv, err := svc2.Chats().GetSession(ctx, running.SessionID); err != nil || hv.Session.ActiveStreamID != "" {
		t.Fatalf("interrupted task's session = %+v, %v", hv.Session, err)
	}
}

func TestBackgroundTaskApprovalSurfacesInTheTaskView(t *testing.T) {
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.ApprovalTimeout = testwait.Timeout })
	ws := h.WithWorkspace()
	if err := os.MkdirAll(filepath.Join(ws, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	updates := watchTasks(h.Svc.Bus)
	parent := h.NewSession()
	h.Provider.Enqueue(backendtest.ToolTurn("c1", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("left it alone"))
	task, err := h.Svc.Tasks.Start(ctx, parent, "clean the build folder")
	if err != nil {
		t.Fatal(err)
	}
	// The task view carries the approval card of its hidden session.
	waiting := waitTask(t, h.Svc, parent, task.ID, "waiting for an approval", func(t tasks.Task) bool { return t.Pending.ApprovalCount == 1 })
	var card map[string]any
	if err := json.Unmarshal(waiting.Pending.Approval, &card); err != nil || card["command"] != "rm -rf build" {
		t.Fatalf("approval in the task view = %s (%v)", waiting.Pending.Approval, err)
	}
	updates.waitSeen(t, task.ID, "waiting for an approval", func(t tasks.Task) bool { return t.Pending.ApprovalCount == 1 })
	// The tray lists the task's turn with its parent to open, waiting for the user.
	act := h.Svc.About().Activity(ctx)
	if len(act.Running) != 1 || act.Running[0].ParentSessionID != parent || act.Running[0].TaskID != task.ID ||
		act.Running[0].Approvals != 1 || act.State != backend.ActivityNeedsYou {
		t.Fatalf("activity = %+v", act)
	}
	// A notification about it opens the parent. The task view and the harness's copy
	// of the frames are two subscribers of the bus: the frame is waited for.
	h.WaitEvent(task.StreamID, protocol.EvApproval)
	var apFrame turn.Frame
	for _, f := range h.Snapshot(task.StreamID) {
		if f.Event == protocol.EvApproval {
			apFrame = f
		}
	}
	if n, ok := h.Svc.About().NoticeForFrame(ctx, apFrame); !ok || n.SessionID != parent || n.Title != "Talaria needs your approval" ||
		!strings.Contains(n.Body, "clean the build folder") {
		t.Fatalf("approval notice = %+v, %v", n, ok)
	}

	// Answered with the hidden session's id, as the parent's window does.
	if err := h.Svc.Approvals().RespondApproval(ctx, waiting.SessionID, card["approval_id"].(string), "deny"); err != nil {
		t.Fatal(err)
	}
	done := waitTask(t, h.Svc, parent, task.ID, "completed", status(store.TaskCompleted))
	if done.ResultPreview != "left it alone" || done.Pending.ApprovalCount != 0 || done.Pending.Approval != nil {
		t.Fatalf("task after the answer = %+v", done)
	}
	if _, err := os.Stat(filepath.Join(ws, "build")); err != nil {
		t.Fatalf("denied command ran: %v", err)
	}
	frames := h.WaitEnd(task.StreamID)
	var doneFrame turn.Frame
	for _, f := range frames {
		if f.Event == protocol.EvDone {
			doneFrame = f
		}
	}
	if n, ok := h.Svc.About().NoticeForFrame(ctx, doneFrame); !ok || n.Title != "Background task finished" || n.SessionID != parent ||
		n.Body != "“clean the build folder”" {
		t.Fatalf("finished notice = %+v, %v", n, ok)
	}
}

// checkSideFrames is checkFrames without the journal, which goes with the copy: seq
// 1..n, user_message first, one terminal frame, stream_end last.
func checkSideFrames(t *testing.T, frames []turn.Frame, terminal string) {
	t.Helper()
	var events []string
	found := ""
	for i, f := range frames {
		events = append(events, f.Event)
		if f.Seq != int64(i+1) {
			t.Fatalf("frame %d has seq %d: %v", i, f.Seq, events)
		}
		switch f.Event {
		case protocol.EvDone, protocol.EvAppError, protocol.EvCancel:
			if found != "" {
				t.Fatalf("two terminal frames: %v", events)
			}
			found = f.Event
		}
	}
	if len(frames) < 3 || frames[0].Event != protocol.EvUserMessage || frames[len(frames)-1].Event != protocol.EvStreamEnd || found != terminal {
		t.Fatalf("side frames %v, want %s before stream_end", events, terminal)
	}
}

func TestSideQuestionBesideARunningTurn(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	parent := h.NewSession()
	h.Provider.Enqueue(providertest.TextTurn("Paris is the capital."))
	h.Provider.EnqueueAux(providertest.TextTurn("Capital of France"))
	s1 := h.Start(parent, "what is the capital of France?")
	h.CheckFrames(s1, h.WaitEnd(s1), protocol.EvDone)
	h.WaitTitle(parent, "Capital of France") // made after stream_end: counted before the next turn
	before := len(h.Provider.Requests())

	// The parent's second turn runs until the side answer has ended (held by the
	// provider, not for a fixed time a loaded machine can outlast); the side question
	// does not wait for it.
	hold := make(chan struct{})
	var holdOnce sync.Once
	release := func() { holdOnce.Do(func() { close(hold) }) }
	t.Cleanup(release)
	h.Provider.Enqueue(
		providertest.Turn{Chunks: []providertest.Chunk{{Text: "Thinking "}, {Text: "it over.", Wait: hold}}},
		providertest.TextTurn("About 2.1 million."))
	s2 := h.Start(parent, "tell me about its history")
	if !awaitRequests(h.Provider, before+1) {
		t.Fatal("the parent's turn never reached the provider")
	}
	sq, err := h.Svc.Tasks.AskSideQuestion(ctx, parent, "  btw, how many people live there?  ")
	if err != nil {
		t.Fatal(err)
	}
	if sq.ParentSessionID != parent || sq.SessionID == "" || sq.SessionID == parent || sq.StreamID == "" ||
		sq.Question != "btw, how many people live there?" || sq.ID == "" {
		t.Fatalf("side question = %+v", sq)
	}
	frames := h.WaitEnd(sq.StreamID)
	checkSideFrames(t, frames, protocol.EvDone)
	if got := backendtest.TextOf(frames, protocol.EvToken); got != "About 2.1 million." {
		t.Fatalf("side answer %q", got)
	}
	for _, f := range frames {
		if f.SessionID != sq.SessionID {
			t.Fatalf("a side frame names session %s", f.SessionID)
		}
	}
	if !h.Svc.Runner.Live(s2) {
		t.Fatal("the parent's turn ended before the side answer: it was not running beside it")
	}
	release()
	// The side turn saw the conversation, and had no tools.
	reqs := backendtest.StreamRequests(h.Provider.Requests())
	side := reqs[len(reqs)-1]
	var sent []string
	for _, m := range side.Messages {
		sent = append(sent, m.Role+":"+m.Content)
	}
	if !strings.Contains(strings.Join(sent, "|"), "user:what is the capital of France?|assistant:Paris is the capital.") ||
		sent[len(sent)-1] != "user:btw, how many people live there?" {
		t.Fatalf("side request messages = %q", sent)
	}
	if len(side.Tools) != 0 || len(reqs[len(reqs)-2].Tools) == 0 {
		t.Fatalf("side request tools = %s (parent's: %d bytes)", side.Tools, len(reqs[len(reqs)-2].Tools))
	}
	// The copy is gone, the parent's turn (released) finishes and its transcript holds
	// nothing of the side question.
	waitGone(t, h.Svc, sq.SessionID)
	if got := backendtest.TextOf(h.WaitEnd(s2), protocol.EvToken); got != "Thinking it over." {
		t.Fatalf("parent's answer %q", got)
	}
	var rows []string
	for _, m := range h.Messages(parent) {
		rows = append(rows, m.Role+":"+m.Content)
	}
	if strings.Join(rows, "|") != "user:what is the capital of France?|assistant:Paris is the capital.|user:tell me about its history|assistant:Thinking it over." {
		t.Fatalf("parent transcript = %q", rows)
	}
	noHiddenLeft(t, h.Svc)
	if list, _ := h.Svc.Chats().ListSessions(ctx); len(list) != 1 {
		t.Fatalf("sessions = %+v", list)
	}
}

func TestSideQuestionCopyIsDeletedWhateverHappens(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	parent := h.NewSession()

	// The turn fails.
	h.Provider.Enqueue(failingTurn("hm"))
	sq, err := h.Svc.Tasks.AskSideQuestion(ctx, parent, "will this fail?")
	if err != nil {
		t.Fatal(err)
	}
	checkSideFrames(t, h.WaitEnd(sq.StreamID), protocol.EvAppError)
	waitGone(t, h.Svc, sq.SessionID)

	// It is cancelled.
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "endless"}}, HangAfter: true})
	sq, err = h.Svc.Tasks.AskSideQuestion(ctx, parent, "go on forever")
	if err != nil {
		t.Fatal(err)
	}
	h.WaitEvent(sq.StreamID, protocol.EvToken)
	if err := h.Svc.Tasks.CancelSideQuestion(sq.ID); err != nil {
		t.Fatal(err)
	}
	checkSideFrames(t, h.WaitEnd(sq.StreamID), protocol.EvCancel)
	waitGone(t, h.Svc, sq.SessionID)
	if err := h.Svc.Tasks.CancelSideQuestion(sq.ID); err != nil {
		t.Fatalf("cancelling an ended side question: %v", err)
	}

	// It is refused: an empty question, an unknown session, no model.
	if _, err := h.Svc.Tasks.AskSideQuestion(ctx, parent, " \n "); !errors.Is(err, turn.ErrEmptyMessage) {
		t.Fatalf("empty question: %v", err)
	}
	if _, err := h.Svc.Tasks.AskSideQuestion(ctx, "no-such-session", "hi"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	if _, err := h.Svc.Settings().SaveSettings(ctx, backend.SettingsInput{ProviderName: "scripted", BaseURL: h.Provider.BaseURL()}); err != nil {
		t.Fatal(err)
	}
	var nc *turn.NotConfiguredError
	if _, err := h.Svc.Tasks.AskSideQuestion(ctx, parent, "no model?"); !errors.As(err, &nc) {
		t.Fatalf("without a model: %v", err)
	}
	noHiddenLeft(t, h.Svc)
	if msgs := h.Messages(parent); len(msgs) != 0 {
		t.Fatalf("the parent's transcript changed: %+v", msgs)
	}
}
