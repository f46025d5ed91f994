package app

import (
	"errors"

	"talaria/backend"
	"talaria/backend/store"
	"talaria/backend/tasks"
)

// Tasks is bound to the window: background tasks of a session (the tray shows them
// running) and side questions (/btw).
type Tasks struct{ app *App }

// taskError is userError for calls naming a task: an unknown task is not a session.
func taskError(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return backend.NewUserError(backend.CodeNotFound, "that background task no longer exists", "").WithCause(err)
	}
	return userError(err)
}

// StartBackgroundTask runs prompt as a background task of a session (/background): in
// its own hidden session with the session's model and workspace, at once or queued
// behind the running ones. The `background_tasks` event reports every change.
func (tk *Tasks) StartBackgroundTask(parentSessionID, prompt string) (tasks.Task, error) {
	t, err := tk.app.service().Tasks.Start(tk.app.bg(), parentSessionID, prompt)
	return t, userError(err)
}

// ListBackgroundTasks lists a session's background tasks that were not dismissed,
// newest first.
func (tk *Tasks) ListBackgroundTasks(parentSessionID string) ([]tasks.Task, error) {
	t, err := tk.app.service().Tasks.List(tk.app.bg(), parentSessionID)
	return lists(t), userError(err)
}

// GetBackgroundTaskResult returns a task's whole result text, or why it failed.
func (tk *Tasks) GetBackgroundTaskResult(taskID string) (tasks.Result, error) {
	r, err := tk.app.service().Tasks.Result(tk.app.bg(), taskID)
	return r, taskError(err)
}

// StopBackgroundTask stops a running task (its partial answer is kept) or takes a
// queued one out of the queue.
func (tk *Tasks) StopBackgroundTask(taskID string) error {
	return taskError(tk.app.service().Tasks.Stop(tk.app.bg(), taskID))
}

// DismissBackgroundTask hides a task from the list (stopping it if it still runs) and
// deletes its hidden session.
func (tk *Tasks) DismissBackgroundTask(taskID string) error {
	return taskError(tk.app.service().Tasks.Dismiss(tk.app.bg(), taskID))
}

// SetMaxBackgroundTasks sets how many background tasks run at once (1 to 10).
func (tk *Tasks) SetMaxBackgroundTasks(n int) error {
	return userError(tk.app.service().Tasks.SetMaxRunning(tk.app.bg(), n))
}

// GetMaxBackgroundTasks returns how many background tasks run at once (default 3).
func (tk *Tasks) GetMaxBackgroundTasks() int { return tk.app.service().Tasks.MaxRunning(tk.app.bg()) }

// AskSideQuestion answers question beside a session's conversation (/btw), from a
// throwaway copy of it, with no tools; it does not wait for the session's running turn.
// Follow the answer as the frames (the `frames` events) of the returned session_id and stream_id.
func (tk *Tasks) AskSideQuestion(sessionID, question string) (tasks.SideQuestion, error) {
	q, err := tk.app.service().Tasks.AskSideQuestion(tk.app.bg(), sessionID, question)
	return q, userError(err)
}

// CancelSideQuestion stops a side question's answer (no-op once it ended).
func (tk *Tasks) CancelSideQuestion(id string) error {
	return userError(tk.app.service().Tasks.CancelSideQuestion(id))
}
