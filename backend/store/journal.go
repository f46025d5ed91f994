package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// JournalFrame is one normalised frame of a stream, kept so a window that was hidden
// or reloaded can catch up (JournalSince).
type JournalFrame struct {
	StreamID  string          `json:"stream_id"`
	SessionID string          `json:"session_id"`
	Seq       int64           `json:"seq"` // per stream, increasing; JournalSince orders by it
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data,omitempty"` // JSON text; nil when the frame has none
	CreatedAt int64           `json:"created_at"`     // epoch milliseconds; 0 means now
}

func checkFrame(f JournalFrame) error {
	switch {
	case f.StreamID == "" || f.SessionID == "":
		return fmt.Errorf("frame %d without stream or session id: %w", f.Seq, ErrInvalid)
	case f.Event == "":
		return fmt.Errorf("frame %s/%d without event: %w", f.StreamID, f.Seq, ErrInvalid)
	case len(f.Data) > 0 && !json.Valid(f.Data):
		return fmt.Errorf("frame %s/%d: data is not JSON: %w", f.StreamID, f.Seq, ErrInvalid)
	}
	return nil
}

// AppendJournal inserts one frame; see AppendJournalBatch.
func (s *Store) AppendJournal(ctx context.Context, f JournalFrame) error {
	return s.appendJournal(ctx, "append journal", []JournalFrame{f})
}

// AppendJournalBatch inserts frames in one transaction: all or none. A frame whose
// CreatedAt is 0 gets now (epoch ms). Errors, with nothing written: ErrNotFound when a
// frame's session does not exist or was deleted (the runner may stop the turn);
// ErrConflict when a (StreamID, Seq) is already stored; ErrInvalid for a frame without
// ids or event, or whose Data is not valid JSON.
func (s *Store) AppendJournalBatch(ctx context.Context, fs []JournalFrame) error {
	return s.appendJournal(ctx, "append journal batch", fs)
}

func (s *Store) appendJournal(ctx context.Context, op string, fs []JournalFrame) error {
	if len(fs) == 0 {
		return nil
	}
	for _, f := range fs {
		if err := checkFrame(f); err != nil {
			return wrap(op, err)
		}
	}
	now := s.now()
	return s.write(ctx, op, func(tx *sql.Tx) error {
		checked := map[string]bool{}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO journal(stream_id, seq, session_id, event, data, created_at)
			VALUES(?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, f := range fs {
			if !checked[f.SessionID] {
				if _, err := liveSession(ctx, tx, f.SessionID); err != nil {
					return err
				}
				checked[f.SessionID] = true
			}
			var data any // NULL when empty
			if len(f.Data) > 0 {
				data = string(f.Data)
			}
			at := f.CreatedAt
			if at == 0 {
				at = now
			}
			if _, err := stmt.ExecContext(ctx, f.StreamID, f.Seq, f.SessionID, f.Event, data, at); err != nil {
				return fmt.Errorf("frame %s/%d: %w", f.StreamID, f.Seq, err)
			}
		}
		return nil
	})
}

// JournalSince returns the stream's frames with Seq > afterSeq in ascending Seq order
// (afterSeq 0 returns them all). An unknown stream gives an empty slice.
func (s *Store) JournalSince(ctx context.Context, streamID string, afterSeq int64) ([]JournalFrame, error) {
	out := []JournalFrame{}
	err := s.read(ctx, "journal of "+streamID, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT stream_id, session_id, seq, event, COALESCE(data, ''), created_at
			FROM journal WHERE stream_id = ? AND seq > ? ORDER BY seq`, streamID, afterSeq)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f JournalFrame
			var data string
			if err := rows.Scan(&f.StreamID, &f.SessionID, &f.Seq, &f.Event, &data, &f.CreatedAt); err != nil {
				return err
			}
			if data != "" {
				f.Data = json.RawMessage(data)
			}
			out = append(out, f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Journal retention: what PruneJournal keeps when the app prunes (Service, at start-up
// and every JournalPruneEvery). Chosen so a chat's recent turns stay replayable (their
// MCP cards read the journal) while a long-used app's journal stops growing.
const (
	// JournalMaxAge: a settled stream's frames go once it ended this long ago...
	JournalMaxAge = 30 * 24 * time.Hour
	// JournalKeepPerSession: ...unless it is one of its session's this many most
	// recently ended streams.
	JournalKeepPerSession = 20
)

// pruneBatch is how many streams' frames one PruneJournal transaction deletes, so a
// large prune never holds the write lock for long.
const pruneBatch = 50

// PruneJournal deletes the frames of settled streams that ended before endedBefore
// (epoch ms), except those of each session's keepPerSession most recently ended streams
// (keepPerSession <= 0 keeps none), and returns how many frames went. Live streams
// keep theirs; transcript rows and the streams rows (a turn's figures) are not
// touched: the journal exists for catch-up and replay only. It works in transactions
// of pruneBatch streams and stops early with ctx's error.
func (s *Store) PruneJournal(ctx context.Context, endedBefore int64, keepPerSession int) (int64, error) {
	var total int64
	for {
		var n int64
		var batch int
		err := s.write(ctx, "prune journal", func(tx *sql.Tx) error {
			n, batch = 0, 0
			rows, err := tx.QueryContext(ctx, `SELECT stream_id FROM (
					SELECT stream_id, ended_at, ROW_NUMBER() OVER (PARTITION BY session_id
						ORDER BY ended_at DESC, started_at DESC, stream_id DESC) AS newest
					FROM streams WHERE ended_at IS NOT NULL) AS st
				WHERE ended_at < ? AND newest > ?
					AND EXISTS (SELECT 1 FROM journal WHERE journal.stream_id = st.stream_id)
				LIMIT ?`, endedBefore, max(keepPerSession, 0), pruneBatch)
			if err != nil {
				return err
			}
			var ids []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, id := range ids {
				res, err := tx.ExecContext(ctx, `DELETE FROM journal WHERE stream_id = ?`, id)
				if err != nil {
					return err
				}
				k, _ := res.RowsAffected()
				n += k
			}
			batch = len(ids)
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		if batch < pruneBatch {
			return total, nil
		}
	}
}
