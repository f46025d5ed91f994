package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// Task statuses (tasks.status). A task is queued until its turn starts, running while
// it runs, and ends completed, failed or stopped.
const (
	TaskQueued    = "queued"
	TaskRunning   = "running"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskStopped   = "stopped"
)

// TaskEnded reports whether status is one a task ends in.
func TaskEnded(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskStopped
}

// Task is a background task: Prompt run as a turn in the hidden session SessionID on
// behalf of the session ParentSessionID, which keeps the record.
type Task struct {
	ID              string `json:"id"` // uuid
	ParentSessionID string `json:"parent_session_id"`
	SessionID       string `json:"session_id"` // the hidden session the turn runs in
	Prompt          string `json:"prompt"`
	Status          string `json:"status"`    // TaskQueued, TaskRunning, TaskCompleted, TaskFailed, TaskStopped
	StreamID        string `json:"stream_id"` // the task's turn; "" while queued
	Result          string `json:"result"`    // the final assistant text once ended ("" when none)
	Error           string `json:"error"`     // why it failed: label and message
	CreatedAt       int64  `json:"created_at"`
	StartedAt       int64  `json:"started_at"` // epoch ms; 0 until it runs
	EndedAt         int64  `json:"ended_at"`   // epoch ms; 0 until it ends
	Dismissed       bool   `json:"dismissed"`  // the user hid it
}

// NewTask is the input of CreateTask.
type NewTask struct {
	ParentSessionID string
	Prompt          string
	// Title of the hidden session ("" for none).
	Title string
}

const taskCols = `id, parent_session_id, session_id, prompt, status, stream_id, result, error,
	created_at, COALESCE(started_at, 0), COALESCE(ended_at, 0), dismissed`

func scanTask(row scanner) (Task, error) {
	var t Task
	err := row.Scan(&t.ID, &t.ParentSessionID, &t.SessionID, &t.Prompt, &t.Status, &t.StreamID, &t.Result,
		&t.Error, &t.CreatedAt, &t.StartedAt, &t.EndedAt, &t.Dismissed)
	return t, err
}

func getTask(ctx context.Context, tx *sql.Tx, id string) (Task, error) {
	t, err := scanTask(tx.QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	return t, err
}

// CreateTask records a queued task and creates its hidden session, in one transaction:
// the session has the parent's model and workspace, Hidden set and ParentID the parent.
// Errors, with nothing written: ErrInvalid for an empty prompt; ErrNotFound when the
// parent does not exist or was deleted.
func (s *Store) CreateTask(ctx context.Context, in NewTask) (Task, error) {
	op := "create task for " + in.ParentSessionID
	if strings.TrimSpace(in.Prompt) == "" {
		return Task{}, wrap(op, fmt.Errorf("the prompt is empty: %w", ErrInvalid))
	}
	sid, err := newSessionID()
	if err != nil {
		return Task{}, wrap(op, err)
	}
	now := s.now()
	t := Task{ID: uuid.NewString(), ParentSessionID: in.ParentSessionID, SessionID: sid, Prompt: in.Prompt,
		Status: TaskQueued, CreatedAt: now}
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		parent, err := getSession(ctx, tx, in.ParentSessionID)
		if err != nil {
			return fmt.Errorf("session %s: %w", in.ParentSessionID, err)
		}
		// The task runs on its parent's runtime with its parent's options; the agent-side
		// session is its own.
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions(id, title, model, workspace, created_at, updated_at,
			revision, hidden, parent_id, runtime, options) VALUES(?, ?, ?, ?, ?, ?, 1, 1, ?, ?, ?)`,
			sid, in.Title, parent.Model, parent.Workspace, now, now, parent.ID, parent.Runtime, string(parent.Options)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO tasks(id, parent_session_id, session_id, prompt, status, created_at)
			VALUES(?, ?, ?, ?, ?, ?)`, t.ID, t.ParentSessionID, t.SessionID, t.Prompt, t.Status, now)
		return err
	})
	if err != nil {
		return Task{}, err
	}
	return t, nil
}

// Task returns one task, dismissed or not. ErrNotFound when there is none.
func (s *Store) Task(ctx context.Context, id string) (Task, error) {
	var out Task
	err := s.read(ctx, "task "+id, func(tx *sql.Tx) error {
		var err error
		out, err = getTask(ctx, tx, id)
		return err
	})
	return out, err
}

// ListTasks returns the tasks of a parent session, newest first; dismissed ones only
// with includeDismissed. A parent without tasks (or unknown) has an empty list.
func (s *Store) ListTasks(ctx context.Context, parentSessionID string, includeDismissed bool) ([]Task, error) {
	q := `SELECT ` + taskCols + ` FROM tasks WHERE parent_session_id = ?`
	if !includeDismissed {
		q += ` AND dismissed = 0`
	}
	return s.tasks(ctx, "tasks of "+parentSessionID, q+` ORDER BY created_at DESC, rowid DESC`, parentSessionID)
}

// OpenTasks returns the tasks that are queued or running, of every parent, oldest
// first (the order queued tasks start in).
func (s *Store) OpenTasks(ctx context.Context) ([]Task, error) {
	return s.tasks(ctx, "open tasks", `SELECT `+taskCols+` FROM tasks INDEXED BY tasks_open
		WHERE status IN ('queued', 'running') ORDER BY created_at, rowid`)
}

func (s *Store) tasks(ctx context.Context, op, query string, args ...any) ([]Task, error) {
	out := []Task{}
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanTask(rows)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// StartTask marks a queued task running with its turn's streamID; StartedAt becomes
// now (epoch ms). It returns the task as saved. Errors, with nothing written:
// ErrNotFound; ErrConflict when the task is not queued (it started, ended or was
// stopped meanwhile).
func (s *Store) StartTask(ctx context.Context, id, streamID string) (Task, error) {
	var out Task
	err := s.write(ctx, "start task "+id, func(tx *sql.Tx) error {
		t, err := getTask(ctx, tx, id)
		if err != nil {
			return err
		}
		if t.Status != TaskQueued {
			return fmt.Errorf("task %s is %s, not queued: %w", id, t.Status, ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET status = ?, stream_id = ?, started_at = ? WHERE id = ?`,
			TaskRunning, streamID, s.now(), id); err != nil {
			return err
		}
		out, err = getTask(ctx, tx, id)
		return err
	})
	return out, err
}

// EndTask ends a queued or running task with status (TaskCompleted, TaskFailed or
// TaskStopped), its result text and error text; EndedAt becomes now (epoch ms). A task
// that already ended is left as it is and returned with changed false. Errors:
// ErrInvalid for another status; ErrNotFound.
func (s *Store) EndTask(ctx context.Context, id, status, result, errText string) (t Task, changed bool, err error) {
	op := "end task " + id
	if !TaskEnded(status) {
		return Task{}, false, wrap(op, fmt.Errorf("%q is not a status a task ends in: %w", status, ErrInvalid))
	}
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE tasks SET status = ?, result = ?, error = ?, ended_at = ?
			WHERE id = ? AND status IN ('queued', 'running')`, status, result, errText, s.now(), id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		changed = n > 0
		t, err = getTask(ctx, tx, id)
		return err
	})
	if err != nil {
		return Task{}, false, err
	}
	return t, changed, nil
}

// DismissTask hides a task from ListTasks (it stays readable with Task). Dismissing
// it again is a no-op. It returns the task as saved. Errors: ErrNotFound.
func (s *Store) DismissTask(ctx context.Context, id string) (Task, error) {
	var out Task
	err := s.write(ctx, "dismiss task "+id, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET dismissed = 1 WHERE id = ?`, id); err != nil {
			return err
		}
		var err error
		out, err = getTask(ctx, tx, id)
		return err
	})
	return out, err
}

// HiddenSessionsToDelete returns the live hidden sessions nothing needs any more: those
// no task owns (a side question's copy left by a crash), and those of tasks that were
// dismissed or whose parent was deleted, once the task is neither queued nor running.
func (s *Store) HiddenSessionsToDelete(ctx context.Context) ([]string, error) {
	out := []string{}
	err := s.read(ctx, "hidden sessions to delete", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT s.id FROM sessions s INDEXED BY sessions_hidden
			WHERE s.hidden = 1 AND s.deleted_at IS NULL AND NOT EXISTS (
				SELECT 1 FROM tasks t JOIN sessions p ON p.id = t.parent_session_id
				WHERE t.session_id = s.id AND (t.status IN ('queued', 'running')
					OR (t.dismissed = 0 AND p.deleted_at IS NULL)))
			ORDER BY s.created_at`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			out = append(out, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
