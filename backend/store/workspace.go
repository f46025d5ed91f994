package store

import (
	"context"
	"database/sql"
	"fmt"
)

// SetSessionWorkspace sets the folder a chat's commands and file tools work in (""
// follows Settings' default). It applies from the chat's next turn; revision moves on.
// ErrNotFound for a missing or deleted session; ErrInvalid for a path over 4096 bytes.
func (s *Store) SetSessionWorkspace(ctx context.Context, sessionID, workspace string) error {
	op := "set workspace of " + sessionID
	if len(workspace) > 4096 {
		return wrap(op, fmt.Errorf("a workspace path of %d bytes: %w", len(workspace), ErrInvalid))
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE sessions SET workspace = ?, revision = revision + 1 WHERE id = ?`, workspace, sessionID)
		return err
	})
}
