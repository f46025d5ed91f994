package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxTitleRunes is the longest title SetTitle keeps from a user (longer ones are cut).
const MaxTitleRunes = 200

// MaxDraftBytes is the largest composer draft SaveDraft stores: 1 MiB.
const MaxDraftBytes = 1 << 20

// RenameSession sets a manual title chosen by the user: surrounding space is trimmed,
// runs of white space become one space, and it is cut to MaxTitleRunes. From then on
// automatic titles no longer apply (see SetTitle). It returns the session as saved.
// Errors: ErrInvalid for a title that is empty after trimming; ErrNotFound when the
// session does not exist or was deleted.
func (s *Store) RenameSession(ctx context.Context, sessionID, title string) (Session, error) {
	op := "rename session " + sessionID
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		return Session{}, wrap(op, fmt.Errorf("the title is empty: %w", ErrInvalid))
	}
	if utf8.RuneCountInString(title) > MaxTitleRunes {
		title = string([]rune(title)[:MaxTitleRunes])
	}
	var out Session
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET title = ?, title_manual = 1, revision = revision + 1
			WHERE id = ?`, title, sessionID); err != nil {
			return err
		}
		var err error
		out, err = getSession(ctx, tx, sessionID)
		return err
	})
	return out, err
}

// SetPinned pins (true) or unpins (false) a session; pinned sessions come first in
// ListSessions. Setting the state it already has writes nothing. Revision moves on
// when it changes; UpdatedAt does not. It returns the session as saved. Errors:
// ErrNotFound when the session does not exist or was deleted.
func (s *Store) SetPinned(ctx context.Context, sessionID string, pinned bool) (Session, error) {
	return s.setFlag(ctx, "pin session "+sessionID, sessionID,
		`UPDATE sessions SET pinned = ?1, revision = revision + 1 WHERE id = ?2 AND pinned <> ?1`, pinned)
}

// SetArchived archives (true: ArchivedAt becomes now, epoch ms) or unarchives (false) a
// session. Archived sessions leave ListSessions for ListArchivedSessions; they stay
// searchable and can still run turns. Setting the state it already has writes nothing.
// Revision moves on when it changes; UpdatedAt does not. It returns the session as
// saved. Errors: ErrNotFound when the session does not exist or was deleted.
func (s *Store) SetArchived(ctx context.Context, sessionID string, archived bool) (Session, error) {
	var at any // NULL: not archived
	if archived {
		at = s.now()
	}
	return s.setFlag(ctx, "archive session "+sessionID, sessionID,
		`UPDATE sessions SET archived_at = ?1, revision = revision + 1
			WHERE id = ?2 AND (archived_at IS NULL) <> (?1 IS NULL)`, at)
}

func (s *Store) setFlag(ctx context.Context, op, sessionID, update string, value any) (Session, error) {
	var out Session
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, update, value, sessionID); err != nil {
			return err
		}
		var err error
		out, err = getSession(ctx, tx, sessionID)
		return err
	})
	return out, err
}

// Draft is the composer's unsent text of a session.
type Draft struct {
	SessionID string `json:"session_id"`
	Text      string `json:"text"`       // "" when there is none
	UpdatedAt int64  `json:"updated_at"` // epoch milliseconds; 0 when there is none
}

// SaveDraft stores the composer's unsent text for a session, replacing the previous
// one; an empty text removes it. Drafts change neither the session's Revision nor its
// UpdatedAt. Errors: ErrInvalid when text is over MaxDraftBytes or not UTF-8;
// ErrNotFound when the session does not exist or was deleted (nothing is written).
func (s *Store) SaveDraft(ctx context.Context, sessionID, text string) error {
	op := "save draft of " + sessionID
	if len(text) > MaxDraftBytes {
		return wrap(op, fmt.Errorf("the draft is %d bytes, over the %d byte limit: %w", len(text), MaxDraftBytes, ErrInvalid))
	}
	if !utf8.ValidString(text) {
		return wrap(op, fmt.Errorf("the draft is not UTF-8 text: %w", ErrInvalid))
	}
	now := s.now()
	return s.write(ctx, op, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if text == "" {
			_, err := tx.ExecContext(ctx, `DELETE FROM drafts WHERE session_id = ?`, sessionID)
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO drafts(session_id, text, updated_at) VALUES(?, ?, ?)
			ON CONFLICT(session_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at`,
			sessionID, text, now)
		return err
	})
}

// Draft returns the session's saved draft (an empty Draft with the SessionID when there
// is none). Errors: ErrNotFound when the session does not exist or was deleted.
func (s *Store) Draft(ctx context.Context, sessionID string) (Draft, error) {
	out := Draft{SessionID: sessionID}
	err := s.read(ctx, "draft of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, `SELECT text, updated_at FROM drafts WHERE session_id = ?`, sessionID).
			Scan(&out.Text, &out.UpdatedAt)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return out, err
}

// ForkRequest asks ForkSession for a new session that starts with a copy of another
// one's rows.
type ForkRequest struct {
	// SessionID is the source session.
	SessionID string
	// Through is the last source position copied, inclusive (0-based); -1 copies every
	// row (a duplicate).
	Through int
	// Title of the new session; "" keeps the source's title (and whether it was set
	// manually).
	Title string
	// Key, when not "", makes the request idempotent: a second ForkSession with the same
	// key and the same source and Through returns the session the first one made instead
	// of making another; the same key with a different source or Through is
	// ErrConflict. Use a fresh random key per user action (a uuid).
	Key string
	// Hidden makes the copy a hidden session whose ParentID is the source (a side
	// question's throwaway copy): not listed, not searched.
	Hidden bool
}

// ForkSession creates a session holding a copy of the source's rows at positions
// 0..Through (every row when Through is -1) in one transaction, and returns it. The
// copy has a new id, CreatedAt = UpdatedAt = now (epoch ms), Revision 1, no usage, no
// draft, not pinned or archived, the source's model and workspace, and ForkedFrom set
// to the source (and, with Hidden, hidden with ParentID the source). Rows keep their role, content, tool calls, kind, stream id and time.
//
// Errors, with nothing written: ErrNotFound when the source does not exist or was
// deleted, or when Key names a fork that was deleted since; ErrInvalid when Through is
// below -1 or not a position of the source; ErrConflict when Key was used for a
// different fork.
func (s *Store) ForkSession(ctx context.Context, req ForkRequest) (Session, error) {
	op := "fork session " + req.SessionID
	if req.Through < -1 {
		return Session{}, wrap(op, fmt.Errorf("position %d: %w", req.Through, ErrInvalid))
	}
	id, err := newSessionID()
	if err != nil {
		return Session{}, wrap(op, err)
	}
	var key any // NULL without a key
	if req.Key != "" {
		key = req.Key
	}
	now := s.now()
	var out Session
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		if req.Key != "" {
			var prevID, prevFrom string
			var prevThrough int
			var deleted sql.NullInt64
			err := tx.QueryRowContext(ctx, `SELECT id, forked_from, COALESCE(fork_position, -1), deleted_at
				FROM sessions WHERE fork_key = ?`, req.Key).Scan(&prevID, &prevFrom, &prevThrough, &deleted)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			case prevFrom != req.SessionID || prevThrough != req.Through:
				return fmt.Errorf("the request key %q was already used for a different fork: %w", req.Key, ErrConflict)
			case deleted.Valid:
				return fmt.Errorf("the fork made by request key %q was deleted: %w", req.Key, ErrNotFound)
			default:
				out, err = getSession(ctx, tx, prevID)
				return err
			}
		}
		src, err := getSession(ctx, tx, req.SessionID)
		if err != nil {
			return fmt.Errorf("session %s: %w", req.SessionID, err)
		}
		if req.Through >= src.MessageCount {
			return fmt.Errorf("position %d is not in the session's %d messages: %w", req.Through, src.MessageCount, ErrInvalid)
		}
		through := req.Through
		if through < 0 {
			through = src.MessageCount - 1
		}
		title, manual := src.Title, src.TitleManual
		if req.Title != "" {
			title, manual = req.Title, true
		}
		parent := ""
		if req.Hidden {
			parent = src.ID
		}
		// A fork keeps the source's runtime and options; its agent-side session is new (the
		// runtime seeds it from the copied history).
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions(id, title, title_manual, model, workspace,
			created_at, updated_at, revision, message_count, forked_from, fork_position, fork_key, hidden, parent_id,
			runtime, options)
			VALUES(?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, title, manual, src.Model, src.Workspace, now, now, through+1, src.ID, req.Through, key,
			req.Hidden, parent, src.Runtime, string(src.Options)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages(session_id, position, role, content, reasoning,
			tool_calls, tool_call_id, name, kind, stream_id, created_at, summary_covers, app_error)
			SELECT ?, position, role, content, reasoning, tool_calls, tool_call_id, name, kind, stream_id, created_at,
				summary_covers, app_error
			FROM messages WHERE session_id = ? AND position <= ? ORDER BY position`, id, src.ID, through); err != nil {
			return err
		}
		if err := copyAttachments(ctx, tx, src.ID, id, through); err != nil {
			return err
		}
		out, err = getSession(ctx, tx, id)
		return err
	})
	return out, err
}
