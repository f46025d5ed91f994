package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// emptyWhere is true for a session that holds nothing of the user's: not deleted or
// hidden, no rows, no turn running, no draft text, no staged files, no background
// tasks, not pinned or archived, its title not set by hand. (Its runtime and options
// may have been changed: they are not worth a chat in the sidebar.)
const emptyWhere = `deleted_at IS NULL AND hidden = 0 AND message_count = 0 AND active_stream_id IS NULL
	AND pinned = 0 AND archived_at IS NULL AND title_manual = 0
	AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id)
	AND NOT EXISTS (SELECT 1 FROM drafts d WHERE d.session_id = sessions.id AND trim(d.text, char(32, 9, 10, 13)) <> '')
	AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.session_id = sessions.id)
	AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.parent_session_id = sessions.id OR t.session_id = sessions.id)`

// DeleteIfEmpty deletes the session (a tombstone, as DeleteSession) when it holds
// nothing of the user's (see emptyWhere), in one transaction, and reports whether it
// did: a chat made by "New chat" and left before its first message. ErrNotFound when
// the session does not exist or was deleted.
func (s *Store) DeleteIfEmpty(ctx context.Context, id string) (bool, error) {
	var gone bool
	err := s.write(ctx, "delete session "+id+" if empty", func(tx *sql.Tx) error {
		var deleted sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT deleted_at FROM sessions WHERE id = ?`, id).Scan(&deleted)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && deleted.Valid) {
			return fmt.Errorf("session %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		n, err := tombstoneEmpty(ctx, tx, s.now(), `id = ?`, id)
		gone = n > 0
		return err
	})
	return gone, err
}

// DeleteEmptySessions deletes every session that holds nothing of the user's (see
// emptyWhere) and was last updated before updatedBefore (epoch ms), and returns how
// many went: the chats left empty when the app last quit.
func (s *Store) DeleteEmptySessions(ctx context.Context, updatedBefore int64) (int64, error) {
	var n int64
	err := s.write(ctx, "delete empty sessions", func(tx *sql.Tx) error {
		var err error
		n, err = tombstoneEmpty(ctx, tx, s.now(), `updated_at < ?`, updatedBefore)
		return err
	})
	return n, err
}

// tombstoneEmpty tombstones the empty sessions matching cond (with args) and drops
// their (blank) drafts.
func tombstoneEmpty(ctx context.Context, tx *sql.Tx, now int64, cond string, args ...any) (int64, error) {
	if _, err := tx.ExecContext(ctx, `DELETE FROM drafts WHERE session_id IN
		(SELECT id FROM sessions WHERE `+emptyWhere+` AND `+cond+`)`, args...); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET deleted_at = ?, title = '', revision = revision + 1
		WHERE `+emptyWhere+` AND `+cond, append([]any{now}, args...)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
