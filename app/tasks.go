package app

import (
	"errors"

	"talaria/backend"
	"talaria/backend/store"
	"talaria/backend/tasks"
)

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
func (a *App) StartBackgroundTask(parentSessionID, prompt string) (tasks.Task, error) {
	t, err := a.service().Tasks.Start(a.bg(), parentSessionID, prompt)
	return t, userError(err)
}

// ListBackgroundTasks lists a session's background tasks that were not dismissed,
// newest first.
func (a *App) ListBackgroundTasks(parentSessionID string) ([]tasks.Task, error) {
	t, err := a.service().Tasks.List(a.bg(), parentSessionID)
	return t, userError(err)
}

// GetBackgroundTaskResult returns a task's whole result text, or why it failed.
func (a *App) GetBackgroundTaskResult(taskID string) (tasks.Result, error) {
	r, err := a.service().Tasks.Result(a.bg(), taskID)
	return r, taskError(err)
}

// StopBackgroundTask stops a running task (its partial answer is kept) or takes a
// queued one out of the queue.
func (a *App) StopBackgroundTask(taskID string) error {
	return taskError(a.service().Tasks.Stop(a.bg(), taskID))
}

// DismissBackgroundTask hides a task from the list (stopping it if it still runs) and
// deletes its hidden session.
func (a *App) DismissBackgroundTask(taskID string) error {
	return taskError(a.service().Tasks.Dismiss(a.bg(), taskID))
}

// SetMaxBackgroundTasks sets how many background tasks run at once (1 to 10).
func (a *App) SetMaxBackgroundTasks(n int) error {
	return userError(a.service().Tasks.SetMaxRunning(a.bg(), n))
}

// GetMaxBackgroundTasks returns how many background tasks run at once (default 3).
func (a *App) GetMaxBackgroundTasks() int { return a.service().Tasks.MaxRunning(a.bg()) }

// AskSideQuestion answers question beside a session's conversation (/btw), from a
// throwaway copy of it, with no tools; it does not wait for the session's running turn.
// Follow the answer as the `frame` events of the returned session_id and stream_id.
func (a *App) AskSideQuestion(sessionID, question string) (tasks.SideQuestion, error) {
	q, err := a.service().Tasks.AskSideQuestion(a.bg(), sessionID, question)
	return q, userError(err)
}

// CancelSideQuestion stops a side question's answer (no-op once it ended).
func (a *App) CancelSideQuestion(id string) error {
	return userError(a.service().Tasks.CancelSideQuestion(id))
}
