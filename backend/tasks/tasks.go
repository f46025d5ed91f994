// Package tasks runs background tasks and side questions, each as an ordinary turn
// (turn.Runner) in a hidden session of its own.
//
// A background task runs a prompt in a fresh hidden session with its parent session's
// model and workspace. The parent keeps the record (store.Task), so every window and a
// restart see it. At most MaxRunning tasks run at once (a setting, 1 to 10, default 3);
// the others wait, queued, oldest first. Every change is published on the bus as
// bus.EventBackgroundTasks with an Update.
//
// A side question is answered from a throwaway hidden copy of a session's rows, with no
// tools, beside whatever turn the session runs (it neither waits for that turn nor
// joins it). The copy is deleted when the answer ends, however it ends.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"talaria/backend/bus"
	"talaria/backend/pending"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// The concurrency limit: the setting's key, its default and its bounds.
const (
	SettingMaxRunning = "tasks.max_running"
	DefaultMaxRunning = 3
	MinMaxRunning     = 1
	MaxMaxRunning     = 10
)

// InterruptedError is the error recorded on a task that was running when Talaria
// stopped (quit, crash or kill): it is failed at the next start.
const InterruptedError = "Interrupted: Talaria stopped while this task ran."

// previewRunes is how much of a result List carries (Result has all of it).
const previewRunes = 280

// ErrClosing is returned when a task or side question is asked for while Talaria quits.
var ErrClosing = errors.New("Talaria is quitting: start it again to run this")

// Task is a background task as the window shows it.
type Task struct {
	ID              string `json:"id"`
	ParentSessionID string `json:"parent_session_id"`
	// SessionID is the task's hidden session: its frames carry it, and its approvals and
	// clarifies are answered with it (RespondApproval, RespondClarify, RespondVault).
	SessionID string `json:"session_id"`
	StreamID  string `json:"stream_id"` // the task's turn; "" while queued
	Prompt    string `json:"prompt"`
	// Status is queued, running, completed, failed or stopped.
	Status string `json:"status" ts:"TaskStatus"`
	// QueuePosition is 1 for the next queued task to start (of every session), 2 for the
	// one after, …; 0 unless queued.
	QueuePosition int    `json:"queue_position"`
	ResultPreview string `json:"result_preview"` // the start of the result (Result has it whole)
	Error         string `json:"error"`          // why it failed: a label and the message
	CreatedAt     int64  `json:"created_at"`     // epoch ms
	StartedAt     int64  `json:"started_at"`     // epoch ms; 0 until it runs
	EndedAt       int64  `json:"ended_at"`       // epoch ms; 0 until it ends
	// Pending is what the task's turn waits for from the user.
	Pending Pending `json:"pending"`
}

// Pending is the head of a hidden session's approval and clarify queues (the frame
// data the cards show, null when none) and their lengths, as backend.PendingView.
type Pending struct {
	Approval      json.RawMessage `json:"approval" ts:"ApprovalData | null"`
	Clarify       json.RawMessage `json:"clarify" ts:"ClarifyData | null"`
	ApprovalCount int             `json:"approval_count"`
	ClarifyCount  int             `json:"clarify_count"`
}

// Result is a task's outcome: the final assistant text of its turn (Text; the partial
// text of a stopped task), or why it failed (Error). Both are "" while it is queued or
// running.
type Result struct {
	TaskID    string `json:"task_id"`
	SessionID string `json:"session_id"`
	Status    string `json:"status" ts:"TaskStatus"`
	Prompt    string `json:"prompt"`
	Text      string `json:"text"`
	Error     string `json:"error"`
	EndedAt   int64  `json:"ended_at"` // epoch ms; 0 until it ends
}

// Update is the payload of bus.EventBackgroundTasks: the parent's tasks as List
// returns them.
type Update struct {
	ParentSessionID string `json:"parent_session_id"`
	Tasks           []Task `json:"tasks"`
}

// Manager runs background tasks and side questions. All methods are safe for
// concurrent use.
type Manager struct {
	store  *store.Store
	runner *turn.Runner
	bus    *bus.Bus
	log    *slog.Logger

	mu      sync.Mutex        // serialises starting, stopping and ending tasks
	running map[string]string // task id -> stream id: the tasks this process runs
	closing bool              // Closing was called: nothing starts any more

	idx      sync.Mutex
	sessions map[string]string        // hidden session id of a task -> parent session id
	taskOf   map[string]string        // hidden session id of a task -> task id
	sides    map[string]*SideQuestion // side question id -> it, while it runs
	sideOf   map[string]string        // copy session id -> side question id
	stopped  bool                     // Wait began: no more goroutines
	wg       sync.WaitGroup

	pubMu sync.Mutex // one publication at a time, each computed when its turn comes
	unsub func()
}

// New returns a Manager. It watches b for the approval and clarify frames of task
// sessions (each publishes an Update); nothing else runs until Resume or Start.
func New(st *store.Store, runner *turn.Runner, b *bus.Bus, log *slog.Logger) *Manager {
	m := &Manager{store: st, runner: runner, bus: b, log: log, running: map[string]string{},
		sessions: map[string]string{}, taskOf: map[string]string{}, sides: map[string]*SideQuestion{}, sideOf: map[string]string{}}
	m.unsub = b.Subscribe(m.onEvent)
	return m
}

// onEvent runs inside bus.Publish: it only looks up and hands off.
func (m *Manager) onEvent(ev bus.Event) {
	if ev.Name != bus.EventFrame {
		return
	}
	f, ok := ev.Payload.(turn.Frame)
	if !ok {
		return
	}
	switch f.Event {
	case protocol.EvApproval, protocol.EvApprovalResolved, protocol.EvClarify, protocol.EvClarifyResolved:
	default:
		return
	}
	m.idx.Lock()
	parent, ok := m.sessions[f.SessionID]
	m.idx.Unlock()
	if ok {
		m.goTracked(func() { m.publish(parent) })
	}
}

// goTracked runs fn in a goroutine Wait waits for; false (and fn not run) once Wait
// began.
func (m *Manager) goTracked(fn func()) bool {
	m.idx.Lock()
	if m.stopped {
		m.idx.Unlock()
		return false
	}
	m.wg.Add(1)
	m.idx.Unlock()
	go func() {
		defer m.wg.Done()
		fn()
	}()
	return true
}

func (m *Manager) indexTask(t store.Task) {
	m.idx.Lock()
	m.sessions[t.SessionID] = t.ParentSessionID
	m.taskOf[t.SessionID] = t.ID
	m.idx.Unlock()
}

// TaskOfSession returns the id and parent of the background task whose hidden session
// is sessionID, for tasks queued or run since this process started.
func (m *Manager) TaskOfSession(sessionID string) (taskID, parentSessionID string, ok bool) {
	m.idx.Lock()
	defer m.idx.Unlock()
	taskID, ok = m.taskOf[sessionID]
	return taskID, m.sessions[sessionID], ok
}

// AdjustConfig sets what a hidden session's turn needs: no model-made title, and for
// a side question's copy no tools and the ephemeral flag. The backend's turn ConfigFunc
// calls it.
func (m *Manager) AdjustConfig(sess store.Session, cfg *turn.Config) {
	if !sess.Hidden {
		return
	}
	cfg.NoTitle = true
	m.idx.Lock()
	_, side := m.sideOf[sess.ID]
	m.idx.Unlock()
	if side {
		cfg.EnabledToolsets = []string{"none"}
		cfg.Ephemeral = true
	}
}

// MaxRunning returns how many tasks may run at once (the setting, DefaultMaxRunning
// when unset or unreadable).
func (m *Manager) MaxRunning(ctx context.Context) int {
	v, ok, err := m.store.Setting(ctx, SettingMaxRunning)
	if err != nil || !ok {
		return DefaultMaxRunning
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < MinMaxRunning || n > MaxMaxRunning {
		return DefaultMaxRunning
	}
	return n
}

// SetMaxRunning stores the concurrency limit (MinMaxRunning to MaxMaxRunning) and
// starts queued tasks the new limit lets through. Tasks already running over a lower
// limit finish. Errors: store.ErrInvalid for a limit out of bounds.
func (m *Manager) SetMaxRunning(ctx context.Context, n int) error {
	if n < MinMaxRunning || n > MaxMaxRunning {
		return fmt.Errorf("the number of background tasks that run at once must be %d to %d, not %d: %w",
			MinMaxRunning, MaxMaxRunning, n, store.ErrInvalid)
	}
	if err := m.store.SetSetting(ctx, SettingMaxRunning, strconv.Itoa(n)); err != nil {
		return err
	}
	dirty, _ := m.pump(ctx)
	m.publishAll(dirty)
	return nil
}

// Start records a background task for parentSessionID and returns it: running when
// fewer than MaxRunning tasks run, else queued. Its turn runs prompt in a new hidden
// session with the parent's model and workspace. Errors, with nothing kept:
// turn.ErrEmptyMessage; store.ErrNotFound for an unknown parent; whatever refuses the
// turn when it starts at once (e.g. *turn.NotConfiguredError); ErrClosing.
func (m *Manager) Start(ctx context.Context, parentSessionID, prompt string) (Task, error) {
	prompt = strings.TrimSpace(prompt)
	if prompt == "" {
		return Task{}, turn.ErrEmptyMessage
	}
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return Task{}, ErrClosing
	}
	t, err := m.store.CreateTask(ctx, store.NewTask{ParentSessionID: parentSessionID, Prompt: prompt,
		Title: turn.ProvisionalTitle("Background: " + prompt)})
	if err != nil {
		return Task{}, err
	}
	m.indexTask(t)
	dirty, refused := m.pump(ctx)
	if err := refused[t.ID]; err != nil {
		// Refused before it ran (no model configured …): the caller gets the error and no
		// record or hidden session is left behind.
		if _, derr := m.store.DismissTask(ctx, t.ID); derr != nil {
			m.log.Warn("dismissing a refused task", "task", t.ID, "err", derr)
		}
		m.deleteSession(t.SessionID)
		dirty[parentSessionID] = true
		m.publishAll(dirty)
		return Task{}, err
	}
	dirty[parentSessionID] = true
	m.publishAll(dirty)
	return m.get(ctx, t.ID)
}

// pump starts queued tasks, oldest first, while fewer than MaxRunning run. It returns
// the parents whose tasks changed, and the error of each task whose turn was refused
// (that task is failed with it).
func (m *Manager) pump(ctx context.Context) (dirty map[string]bool, refused map[string]error) {
	dirty, refused = map[string]bool{}, map[string]error{}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return dirty, refused
	}
	limit := m.MaxRunning(ctx)
	if len(m.running) >= limit {
		return dirty, refused
	}
	open, err := m.store.OpenTasks(ctx)
	if err != nil {
		m.log.Error("reading queued tasks", "err", err)
		return dirty, refused
	}
	for _, t := range open {
		if len(m.running) >= limit {
			break
		}
		if t.Status != store.TaskQueued {
			continue
		}
		if _, err := m.store.GetSession(ctx, t.ParentSessionID); errors.Is(err, store.ErrNotFound) {
			// Its parent was deleted while it waited.
			m.endLocked(ctx, t, store.TaskStopped, "", "")
			_, _ = m.store.DismissTask(ctx, t.ID)
			m.deleteSession(t.SessionID)
			continue
		}
		m.indexTask(t)
		dirty[t.ParentSessionID] = true
		st, err := m.runner.StartTurn(ctx, t.SessionID, t.Prompt)
		if err != nil {
			m.log.Info("background task refused", "task", t.ID, "err", err)
			refused[t.ID] = err
			m.endLocked(ctx, t, store.TaskFailed, "", err.Error())
			continue
		}
		if _, err := m.store.StartTask(ctx, t.ID, st.StreamID); err != nil {
			m.log.Error("recording a started task", "task", t.ID, "err", err)
			_ = m.runner.Cancel(st.StreamID)
		}
		m.running[t.ID] = st.StreamID
		stream := st.StreamID
		if !m.goTracked(func() { m.watch(t, stream) }) {
			_ = m.runner.Cancel(stream)
		}
	}
	return dirty, refused
}

func (m *Manager) endLocked(ctx context.Context, t store.Task, status, result, errText string) {
	if _, _, err := m.store.EndTask(ctx, t.ID, status, result, errText); err != nil {
		m.log.Error("recording the end of a task", "task", t.ID, "status", status, "err", err)
	}
}

// watch waits for a task's turn to settle, records how it ended and starts the next.
func (m *Manager) watch(t store.Task, streamID string) {
	_ = m.runner.Wait(context.Background(), streamID)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	m.mu.Lock()
	delete(m.running, t.ID)
	if m.closing {
		// Quitting: the record stays running, and the next start fails it.
		m.mu.Unlock()
		return
	}
	status, result, errText := m.outcome(ctx, t.SessionID, streamID)
	ended, _, err := m.store.EndTask(ctx, t.ID, status, result, errText)
	m.mu.Unlock()
	if err != nil {
		m.log.Error("recording the end of a task", "task", t.ID, "err", err)
	} else {
		m.log.Info("background task ended", "task", t.ID, "status", ended.Status)
		if ended.Dismissed {
			m.deleteSession(t.SessionID)
		}
	}
	dirty, _ := m.pump(ctx)
	dirty[t.ParentSessionID] = true
	m.publishAll(dirty)
}

// outcome reads how a task's settled turn ended: the terminal frame from the journal,
// the final assistant text from the saved rows.
func (m *Manager) outcome(ctx context.Context, sessionID, streamID string) (status, result, errText string) {
	if rows, err := m.store.Messages(ctx, sessionID); err == nil {
		for i := len(rows) - 1; i >= 0; i-- {
			r := rows[i]
			if r.StreamID == streamID && r.Role == "assistant" && r.Kind == store.KindNormal && strings.TrimSpace(r.Content) != "" {
				result = r.Content
				break
			}
		}
	}
	frames, err := m.store.JournalSince(ctx, streamID, 0)
	if err != nil {
		return store.TaskFailed, result, "Error: the end of this task could not be read: " + err.Error()
	}
	for i := len(frames) - 1; i >= 0; i-- {
		switch frames[i].Event {
		case protocol.EvDone:
			return store.TaskCompleted, result, ""
		case protocol.EvCancel:
			return store.TaskStopped, result, ""
		case protocol.EvAppError:
			var ae turn.AppError
			_ = json.Unmarshal(frames[i].Data, &ae)
			return store.TaskFailed, result, joinNonEmpty(ae.Label, ae.Message)
		}
	}
	return store.TaskFailed, result, "Error: the task's turn ended without saying how"
}

func joinNonEmpty(label, msg string) string {
	switch {
	case label == "":
		return msg
	case msg == "":
		return label
	}
	return label + ": " + msg
}

// Stop stops a task: a running one's turn is cancelled (it ends stopped, its partial
// text kept as the result), a queued one leaves the queue as stopped. Stopping a task
// that ended is a no-op. Errors: store.ErrNotFound.
func (m *Manager) Stop(ctx context.Context, taskID string) error {
	m.mu.Lock()
	t, err := m.store.Task(ctx, taskID)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	if stream, ok := m.running[taskID]; ok {
		m.mu.Unlock()
		return m.runner.Cancel(stream)
	}
	changed := false
	if t.Status == store.TaskQueued {
		_, changed, err = m.store.EndTask(ctx, taskID, store.TaskStopped, "", "")
	}
	m.mu.Unlock()
	if changed {
		m.publish(t.ParentSessionID)
	}
	return err
}

// Dismiss hides a task from List. A queued task leaves the queue (stopped) and a
// running one is stopped: nothing runs unseen. Its hidden session is deleted at once
// when the task is not running, else as soon as its turn has settled. Dismissing it
// again is a no-op. Errors: store.ErrNotFound.
func (m *Manager) Dismiss(ctx context.Context, taskID string) error {
	m.mu.Lock()
	t, err := m.store.Task(ctx, taskID)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	if t.Status == store.TaskQueued {
		m.endLocked(ctx, t, store.TaskStopped, "", "")
	}
	if _, err := m.store.DismissTask(ctx, taskID); err != nil {
		m.mu.Unlock()
		return err
	}
	stream, running := m.running[taskID]
	m.mu.Unlock()
	if running {
		_ = m.runner.Cancel(stream) // watch deletes the session once it settled
	} else {
		m.deleteSession(t.SessionID)
	}
	m.publish(t.ParentSessionID)
	return nil
}

// deleteSession deletes a hidden session (tombstone, rows purged); one already gone is
// fine.
func (m *Manager) deleteSession(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.store.DeleteSession(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		m.log.Error("deleting a hidden session", "session", id, "err", err)
	}
	m.idx.Lock()
	delete(m.sessions, id)
	delete(m.taskOf, id)
	m.idx.Unlock()
}

// ParentDeleted stops and dismisses every task of a session that was deleted, deletes
// their hidden sessions (a running task's once it settled), and cancels its side
// questions. The backend calls it after DeleteSession.
func (m *Manager) ParentDeleted(ctx context.Context, parentSessionID string) {
	all, err := m.store.ListTasks(ctx, parentSessionID, true)
	if err != nil {
		m.log.Error("tasks of a deleted session", "session", parentSessionID, "err", err)
	}
	for _, t := range all {
		if t.Dismissed && store.TaskEnded(t.Status) {
			continue
		}
		if err := m.Dismiss(ctx, t.ID); err != nil {
			m.log.Warn("dismissing a task of a deleted session", "task", t.ID, "err", err)
		}
	}
	m.idx.Lock()
	var streams []string
	for _, sq := range m.sides {
		if sq.ParentSessionID == parentSessionID {
			streams = append(streams, sq.StreamID)
		}
	}
	m.idx.Unlock()
	for _, s := range streams {
		_ = m.runner.Cancel(s)
	}
}

// List returns the parent session's tasks that were not dismissed, newest first.
func (m *Manager) List(ctx context.Context, parentSessionID string) ([]Task, error) {
	ts, err := m.store.ListTasks(ctx, parentSessionID, false)
	if err != nil {
		return []Task{}, err
	}
	positions, err := m.queuePositions(ctx)
	if err != nil {
		return []Task{}, err
	}
	out := make([]Task, 0, len(ts))
	for _, t := range ts {
		out = append(out, m.view(t, positions))
	}
	return out, nil
}

func (m *Manager) get(ctx context.Context, taskID string) (Task, error) {
	t, err := m.store.Task(ctx, taskID)
	if err != nil {
		return Task{}, err
	}
	positions, err := m.queuePositions(ctx)
	return m.view(t, positions), err
}

// queuePositions numbers the queued tasks of every session, next to start first.
func (m *Manager) queuePositions(ctx context.Context) (map[string]int, error) {
	open, err := m.store.OpenTasks(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, t := range open {
		if t.Status == store.TaskQueued {
			out[t.ID] = len(out) + 1
		}
	}
	return out, nil
}

func (m *Manager) view(t store.Task, positions map[string]int) Task {
	v := Task{ID: t.ID, ParentSessionID: t.ParentSessionID, SessionID: t.SessionID, StreamID: t.StreamID,
		Prompt: t.Prompt, Status: t.Status, QueuePosition: positions[t.ID], ResultPreview: preview(t.Result),
		Error: t.Error, CreatedAt: t.CreatedAt, StartedAt: t.StartedAt, EndedAt: t.EndedAt}
	if t.Status == store.TaskRunning {
		q := m.runner.Pending()
		if it, n, ok := q.Head(t.SessionID, pending.KindApproval); ok {
			v.Pending.Approval, v.Pending.ApprovalCount = it.Data, n
		}
		if it, n, ok := q.Head(t.SessionID, pending.KindClarify); ok {
			v.Pending.Clarify, v.Pending.ClarifyCount = it.Data, n
		}
	}
	return v
}

func preview(s string) string {
	if utf8.RuneCountInString(s) <= previewRunes {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:previewRunes-1]), " ") + "…"
}

// Result returns a task's result (dismissed tasks included). Errors: store.ErrNotFound.
func (m *Manager) Result(ctx context.Context, taskID string) (Result, error) {
	t, err := m.store.Task(ctx, taskID)
	if err != nil {
		return Result{}, err
	}
	return Result{TaskID: t.ID, SessionID: t.SessionID, Status: t.Status, Prompt: t.Prompt, Text: t.Result,
		Error: t.Error, EndedAt: t.EndedAt}, nil
}

// publish sends the parent's tasks as an Update.
func (m *Manager) publish(parentSessionID string) {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := m.List(ctx, parentSessionID)
	if err != nil {
		m.log.Warn("listing tasks for an update", "session", parentSessionID, "err", err)
		return
	}
	m.bus.Publish(bus.Event{Name: bus.EventBackgroundTasks, Payload: Update{ParentSessionID: parentSessionID, Tasks: list}})
}

func (m *Manager) publishAll(parents map[string]bool) {
	for p := range parents {
		m.publish(p)
	}
}

// Resume runs at start-up, after the runner settled the turns the last process left
// running: tasks still recorded running are failed (InterruptedError), hidden sessions
// nothing needs any more are deleted (side-question copies, dismissed tasks'), and
// queued tasks start.
func (m *Manager) Resume(ctx context.Context) error {
	open, err := m.store.OpenTasks(ctx)
	if err != nil {
		return err
	}
	dirty := map[string]bool{}
	m.mu.Lock()
	for _, t := range open {
		m.indexTask(t)
		if _, mine := m.running[t.ID]; t.Status == store.TaskRunning && !mine {
			m.endLocked(ctx, t, store.TaskFailed, "", InterruptedError)
			dirty[t.ParentSessionID] = true
		}
	}
	m.mu.Unlock()
	stale, err := m.store.HiddenSessionsToDelete(ctx)
	if err != nil {
		return err
	}
	for _, id := range stale {
		m.deleteSession(id)
	}
	if len(stale) > 0 {
		m.log.Info("deleted hidden sessions left over", "count", len(stale))
	}
	started, _ := m.pump(ctx)
	for p := range started {
		dirty[p] = true
	}
	m.publishAll(dirty)
	return nil
}

// Closing is called when Talaria quits, before the runner stops every turn: nothing
// starts any more, and tasks whose turns are stopped by the quit stay recorded running
// (the next start fails them) instead of looking stopped by the user.
func (m *Manager) Closing() {
	m.mu.Lock()
	m.closing = true
	m.mu.Unlock()
}

// Wait waits, at most until ctx ends, for the Manager's goroutines (after the runner
// stopped the turns): side questions' copies are deleted by then. It stops watching
// the bus.
func (m *Manager) Wait(ctx context.Context) error {
	m.Closing()
	m.unsub()
	m.idx.Lock()
	m.stopped = true
	m.idx.Unlock()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
