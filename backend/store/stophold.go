package store

import (
	"context"
	"database/sql"
	"errors"
)

// SetStopHold records that the user stopped a turn in the session (hold true): no
// automatic turn (a steer follow-up, a continuation) may start there until the user's
// next message clears it (hold false). It survives restarts. Errors: ErrNotFound.
func (s *Store) SetStopHold(ctx context.Context, sessionID string, hold bool) error {
	return s.write(ctx, "set stop hold", func(tx *sql.Tx) error {
		v := 0
		if hold {
			v = 1
		}
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET stop_hold = ? WHERE id = ? AND deleted_at IS NULL`, v, sessionID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// StopHold reports whether the session is held after a user's Stop (see SetStopHold).
// Errors: ErrNotFound.
func (s *Store) StopHold(ctx context.Context, sessionID string) (bool, error) {
	var v int
	err := s.read(ctx, "read stop hold", func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT stop_hold FROM sessions WHERE id = ? AND deleted_at IS NULL`, sessionID).Scan(&v)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return false, ErrNotFound
	}
	return v == 1, err
}
