package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// MaxPageRows is the most rows one page of a transcript returns (MessagesBefore,
// MessagesFrom); a larger limit is cut to it.
const MaxPageRows = 1000

// maxToolStretch bounds how far a page is stretched over tool rows (see MessagePage).
const maxToolStretch = 1000

// MessagePage is a run of consecutive rows of one session, ordered by Position. A page
// never starts with a tool row: it is stretched back to the assistant row whose call the
// tool row answers (the window shows a tool result inside that row); MessagesFrom also
// stretches its end over the tool rows that follow it.
type MessagePage struct {
	Messages []Message `json:"messages"`
	// Before and After report rows of the session before the first and after the last
	// row of the page (for an empty page: before / at the position asked for).
	Before bool `json:"before"`
	After  bool `json:"after"`
}

const messageCols = `id, session_id, position, role, content, reasoning,
	COALESCE(tool_calls, ''), tool_call_id, name, kind, stream_id, created_at, summary_covers,
	COALESCE(app_error, '')`

func scanMessages(rows *sql.Rows) ([]Message, error) {
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		var m Message
		var calls, appErr string
		if err := rows.Scan(&m.ID, &m.SessionID, &m.Position, &m.Role, &m.Content, &m.Reasoning,
			&calls, &m.ToolCallID, &m.Name, &m.Kind, &m.StreamID, &m.CreatedAt, &m.SummaryCovers, &appErr); err != nil {
			return nil, err
		}
		m.Error = parseRowError(appErr)
		if calls != "" {
			if err := json.Unmarshal([]byte(calls), &m.ToolCalls); err != nil {
				return nil, fmt.Errorf("message %d tool_calls: %w", m.ID, err)
			}
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func pageLimit(limit int) int {
	if limit <= 0 || limit > MaxPageRows {
		return MaxPageRows
	}
	return limit
}

// MessagesBefore returns the last limit rows of the session whose Position is below
// before (before < 0: the session's last rows), stretched back over tool rows (see
// MessagePage). limit <= 0 or over MaxPageRows means MaxPageRows. It reads only the
// rows returned, through the (session_id, position) index, so a page of a 5,000-row
// session costs what a page of a 50-row one costs. ErrNotFound when the session does
// not exist or was deleted.
func (s *Store) MessagesBefore(ctx context.Context, sessionID string, before, limit int) (MessagePage, error) {
	limit = pageLimit(limit)
	var page MessagePage
	err := s.read(ctx, "messages of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		upper := before
		if upper < 0 {
			upper = int(^uint32(0) >> 1)
		}
		msgs, err := rowsBackwards(ctx, tx, sessionID, upper, limit)
		if err != nil {
			return err
		}
		if msgs, err = stretchBack(ctx, tx, sessionID, msgs); err != nil {
			return err
		}
		if err := attachTo(ctx, tx, sessionID, msgs); err != nil {
			return err
		}
		page.Messages = msgs
		first, last := upper, upper-1
		if len(msgs) > 0 {
			first, last = msgs[0].Position, msgs[len(msgs)-1].Position
		}
		if page.Before, err = hasRow(ctx, tx, sessionID, "position < ?", first); err != nil {
			return err
		}
		page.After, err = hasRow(ctx, tx, sessionID, "position > ?", last)
		return err
	})
	if err != nil {
		return MessagePage{}, err
	}
	return page, nil
}

// MessagesFrom returns the first limit rows of the session whose Position is from or
// more, stretched back and forward over tool rows (see MessagePage); limit as for
// MessagesBefore. ErrNotFound when the session does not exist or was deleted.
func (s *Store) MessagesFrom(ctx context.Context, sessionID string, from, limit int) (MessagePage, error) {
	limit = pageLimit(limit)
	from = max(from, 0)
	var page MessagePage
	err := s.read(ctx, "messages of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+messageCols+` FROM messages
			WHERE session_id = ? AND position >= ? ORDER BY position LIMIT ?`, sessionID, from, limit)
		if err != nil {
			return err
		}
		msgs, err := scanMessages(rows)
		if err != nil {
			return err
		}
		if msgs, err = stretchBack(ctx, tx, sessionID, msgs); err != nil {
			return err
		}
		// Forward: the tool rows answering the page's last calls.
		for n := 0; len(msgs) > 0 && n < maxToolStretch; {
			rows, err := tx.QueryContext(ctx, `SELECT `+messageCols+` FROM messages
				WHERE session_id = ? AND position > ? ORDER BY position LIMIT 32`, sessionID, msgs[len(msgs)-1].Position)
			if err != nil {
				return err
			}
			more, err := scanMessages(rows)
			if err != nil {
				return err
			}
			k := 0
			for k < len(more) && more[k].Role == "tool" {
				k++
			}
			msgs = append(msgs, more[:k]...)
			n += k
			if k < len(more) || len(more) == 0 {
				break
			}
		}
		if err := attachTo(ctx, tx, sessionID, msgs); err != nil {
			return err
		}
		page.Messages = msgs
		first, last := from, from-1
		if len(msgs) > 0 {
			first, last = msgs[0].Position, msgs[len(msgs)-1].Position
		}
		if page.Before, err = hasRow(ctx, tx, sessionID, "position < ?", first); err != nil {
			return err
		}
		page.After, err = hasRow(ctx, tx, sessionID, "position > ?", last)
		return err
	})
	if err != nil {
		return MessagePage{}, err
	}
	return page, nil
}

// rowsBackwards reads up to limit rows with Position below upper, returned in order.
func rowsBackwards(ctx context.Context, tx *sql.Tx, sessionID string, upper, limit int) ([]Message, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+messageCols+` FROM messages
		WHERE session_id = ? AND position < ? ORDER BY position DESC LIMIT ?`, sessionID, upper, limit)
	if err != nil {
		return nil, err
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(msgs)-1; i < j; i, j = i+1, j-1 {
		msgs[i], msgs[j] = msgs[j], msgs[i]
	}
	return msgs, nil
}

// stretchBack prepends rows until the first is not a tool row (or the session starts).
func stretchBack(ctx context.Context, tx *sql.Tx, sessionID string, msgs []Message) ([]Message, error) {
	for n := 0; len(msgs) > 0 && msgs[0].Role == "tool" && n < maxToolStretch; {
		more, err := rowsBackwards(ctx, tx, sessionID, msgs[0].Position, 32)
		if err != nil || len(more) == 0 {
			return msgs, err
		}
		k := len(more)
		for k > 0 && more[k-1].Role == "tool" {
			k--
		}
		start := max(k-1, 0) // the row before the tool rows (their caller), if read
		msgs = append(append([]Message(nil), more[start:]...), msgs...)
		n += len(more) - start
	}
	return msgs, nil
}

func hasRow(ctx context.Context, tx *sql.Tx, sessionID, cond string, pos int) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM messages WHERE session_id = ? AND `+strings.TrimSpace(cond)+` LIMIT 1`,
		sessionID, pos).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}
