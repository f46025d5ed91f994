package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Saved is the answer of AppendMessages and SpliceMessages.
type Saved struct {
	// Session is the session after the save; its Revision is the base of the next save.
	Session Session `json:"session"`
	// Messages are the rows written, with their IDs, positions and times filled in.
	Messages []Message `json:"messages"`
}

// AppendMessages appends rows after the session's last row, if the session is still at
// baseRevision (the Revision of the caller's read). Only the new rows are written. See
// SpliceMessages for the fields filled in and the errors.
func (s *Store) AppendMessages(ctx context.Context, sessionID string, baseRevision int64, rows []Message) (Saved, error) {
	return s.splice(ctx, "append messages to "+sessionID, sessionID, baseRevision, -1, rows)
}

// SpliceMessages replaces the session's rows from position from (0-based) to the end
// with rows, if the session is still at baseRevision (the Revision of the caller's
// read): rows before from are not touched, rows at from and after are deleted and rows
// are written at from, from+1, … (from equal to the row count appends). This is how an
// edit saves only the changed range. In one transaction the revision moves on by one,
// message_count follows and UpdatedAt becomes now (epoch ms); the search index follows
// the rows. The saved rows get SessionID, Position, and CreatedAt (now) when 0; the
// caller's slice is not modified.
//
// Errors, each with nothing written: *ConflictError (errors.Is ErrConflict) when the
// session's revision is not baseRevision, so newer rows are never overwritten; ErrNotFound
// when the session does not exist or was deleted; *BusyError while a turn streams in
// the session (its rows would land after the splice); ErrInvalid when from is outside
// 0..row count or a row has no role or an unknown kind.
func (s *Store) SpliceMessages(ctx context.Context, sessionID string, baseRevision int64, from int, rows []Message) (Saved, error) {
	op := fmt.Sprintf("splice messages of %s from %d", sessionID, from)
	if from < 0 {
		return Saved{}, wrap(op, fmt.Errorf("position %d: %w", from, ErrInvalid))
	}
	return s.splice(ctx, op, sessionID, baseRevision, from, rows)
}

// splice is SpliceMessages; from -1 appends.
func (s *Store) splice(ctx context.Context, op, sessionID string, baseRevision int64, from int, rows []Message) (Saved, error) {
	for i, m := range rows {
		if err := checkRow(m); err != nil {
			return Saved{}, wrap(op, fmt.Errorf("row %d: %w", i, err))
		}
	}
	rows = append([]Message(nil), rows...)
	now := s.now()
	var out Saved
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		st, err := liveSession(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		var rev int64
		if err := tx.QueryRowContext(ctx, `SELECT revision FROM sessions WHERE id = ?`, sessionID).Scan(&rev); err != nil {
			return err
		}
		if rev != baseRevision {
			return &ConflictError{SessionID: sessionID, Have: rev, Want: baseRevision}
		}
		if st.activeStream != "" {
			return &BusyError{SessionID: sessionID, StreamID: st.activeStream}
		}
		next, err := nextPosition(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if from < 0 {
			from = next
		}
		if from > next {
			return fmt.Errorf("position %d is past the session's %d rows: %w", from, next, ErrInvalid)
		}
		if from < next {
			if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ? AND position >= ?`,
				sessionID, from); err != nil {
				return err
			}
		}
		if err := insertRows(ctx, tx, sessionID, "", from, now, rows); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET message_count = ?, revision = revision + 1,
			updated_at = MAX(updated_at, ?) WHERE id = ?`, from+len(rows), now, sessionID); err != nil {
			return err
		}
		out.Messages = rows
		out.Session, err = getSession(ctx, tx, sessionID)
		return err
	})
	if err != nil {
		return Saved{}, err
	}
	return out, nil
}
