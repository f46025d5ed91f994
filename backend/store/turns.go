package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"talaria/sidecar/protocol"
)

// Terminals: how a stream ended (streams.terminal, SettleTurn's terminal argument).
const (
	TerminalDone        = "done"        // the turn completed
	TerminalAppError    = "apperror"    // the turn failed
	TerminalCancel      = "cancel"      // the user stopped it
	TerminalInterrupted = "interrupted" // settled after a crash (see LiveStreams)
)

// LiveStream is a stream that was admitted and not yet settled.
type LiveStream struct {
	StreamID  string `json:"stream_id"`
	SessionID string `json:"session_id"`
	StartedAt int64  `json:"started_at"` // epoch milliseconds
}

func validTerminal(t string) bool {
	switch t {
	case TerminalDone, TerminalAppError, TerminalCancel, TerminalInterrupted:
		return true
	}
	return false
}

func validKind(k string) bool {
	switch k {
	case KindNormal, KindCancelled, KindError, KindInterrupted, KindTruncated, KindSummary:
		return true
	}
	return false
}

func checkRow(m Message) error {
	if m.Role == "" {
		return fmt.Errorf("message without a role: %w", ErrInvalid)
	}
	if !validKind(m.Kind) {
		return fmt.Errorf("unknown message kind %q: %w", m.Kind, ErrInvalid)
	}
	if m.SummaryCovers < 0 || (m.SummaryCovers > 0 && m.Kind != KindSummary) {
		return fmt.Errorf("summary_covers %d on a %q row: %w", m.SummaryCovers, m.Kind, ErrInvalid)
	}
	return nil
}

// nextPosition is one past the session's last row (0 for none); it reads the
// (session_id, position) index only.
func nextPosition(ctx context.Context, tx *sql.Tx, sessionID string) (int, error) {
	var next int
	err := tx.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE session_id = ?`, sessionID).Scan(&next)
	return next, err
}

// insertRows appends rows at positions from, from+1, … and fills in their ID,
// SessionID, Position, StreamID (when empty) and CreatedAt (when 0).
func insertRows(ctx context.Context, tx *sql.Tx, sessionID, streamID string, from int, now int64, rows []Message) error {
	if len(rows) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO messages(session_id, position, role, content, reasoning,
		tool_calls, tool_call_id, name, kind, stream_id, created_at, summary_covers, app_error)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i := range rows {
		m := &rows[i]
		m.SessionID, m.Position = sessionID, from+i
		if m.StreamID == "" {
			m.StreamID = streamID
		}
		if m.CreatedAt == 0 {
			m.CreatedAt = now
		}
		var calls any // NULL when there are none
		if len(m.ToolCalls) > 0 {
			b, err := json.Marshal(m.ToolCalls)
			if err != nil {
				return fmt.Errorf("tool_calls of row %d: %w", i, err)
			}
			calls = string(b)
		}
		if m.Kind != KindError {
			m.Error = nil
		}
		appErr, err := rowErrorJSON(m.Error)
		if err != nil {
			return fmt.Errorf("app_error of row %d: %w", i, err)
		}
		res, err := stmt.ExecContext(ctx, m.SessionID, m.Position, m.Role, m.Content, m.Reasoning,
			calls, m.ToolCallID, m.Name, m.Kind, m.StreamID, m.CreatedAt, m.SummaryCovers, appErr)
		if err != nil {
			return err
		}
		if m.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		if len(m.Attachments) > 0 {
			m.Attachments = append([]Attachment(nil), m.Attachments...) // filled in below; keep the caller's
		}
	}
	return insertAttachments(ctx, tx, sessionID, now, rows)
}

// AdmitTurn starts a turn, atomically: the session must exist and not be deleted
// (else ErrNotFound) and have no active stream (else *BusyError naming it); user is
// appended at the next position (Role defaults to "user"; SessionID, Position,
// StreamID and a zero CreatedAt are filled in), active_stream_id becomes streamID, a
// live streams row is inserted, and revision, message_count and updated_at (epoch ms)
// move on. It returns the saved row with its ID. ErrInvalid for an empty streamID or a
// bad row; ErrConflict when streamID was used before. On error nothing is written.
func (s *Store) AdmitTurn(ctx context.Context, sessionID, streamID string, user Message) (Message, error) {
	return s.admit(ctx, sessionID, streamID, -1, 0, user)
}

// AdmitTurnReplacing is AdmitTurn for a retry or an edit: in the same transaction the
// rows from position from to the end are deleted (with their attachments) and user is
// saved at from, if the session is still at baseRevision. Errors: AdmitTurn's, and
// *ConflictError when the session moved on; ErrInvalid when from is outside 0..row
// count.
func (s *Store) AdmitTurnReplacing(ctx context.Context, sessionID, streamID string, from int, baseRevision int64, user Message) (Message, error) {
	if from < 0 {
		return Message{}, wrap("admit turn "+streamID, fmt.Errorf("position %d: %w", from, ErrInvalid))
	}
	return s.admit(ctx, sessionID, streamID, from, baseRevision, user)
}

// admit is AdmitTurn (from -1) and AdmitTurnReplacing.
func (s *Store) admit(ctx context.Context, sessionID, streamID string, from int, baseRevision int64, user Message) (Message, error) {
	op := "admit turn " + streamID + " on " + sessionID
	if user.Role == "" {
		user.Role = "user"
	}
	if streamID == "" {
		return Message{}, wrap(op, fmt.Errorf("empty stream id: %w", ErrInvalid))
	}
	if err := checkRow(user); err != nil {
		return Message{}, wrap(op, err)
	}
	now := s.now()
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		st, err := liveSession(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if st.activeStream != "" {
			return &BusyError{SessionID: sessionID, StreamID: st.activeStream}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO streams(stream_id, session_id, started_at) VALUES(?, ?, ?)`,
			streamID, sessionID, now); err != nil {
			return err
		}
		next, err := nextPosition(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if from >= 0 {
			var rev int64
			if err := tx.QueryRowContext(ctx, `SELECT revision FROM sessions WHERE id = ?`, sessionID).Scan(&rev); err != nil {
				return err
			}
			if rev != baseRevision {
				return &ConflictError{SessionID: sessionID, Have: rev, Want: baseRevision}
			}
			if from > next {
				return fmt.Errorf("position %d is past the session's %d rows: %w", from, next, ErrInvalid)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ? AND position >= ?`, sessionID, from); err != nil {
				return err
			}
			next = from
		}
		rows := []Message{user}
		if err := insertRows(ctx, tx, sessionID, streamID, next, now, rows); err != nil {
			return err
		}
		user = rows[0]
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET active_stream_id = ?, message_count = ?,
			revision = revision + 1, updated_at = MAX(updated_at, ?) WHERE id = ?`,
			streamID, next+1, now, sessionID)
		return err
	})
	if err != nil {
		return Message{}, err
	}
	return user, nil
}

// SettleTurn ends a turn in one transaction: rows are appended at the next positions
// (earlier rows are never rewritten; the stored rows get SessionID, Position, StreamID
// when empty and CreatedAt when 0; the caller's slice is not modified), usage (tokens, USD) is added to the session's counters,
// active_stream_id is cleared only if it equals streamID (another stream stays
// active), the stream is marked ended with terminal (TerminalDone, TerminalAppError,
// TerminalCancel or TerminalInterrupted), and revision, message_count and updated_at
// move on. A stream that was never admitted is recorded as ended.
//
// Errors, each with nothing written: ErrNotFound when the session does not exist or was
// deleted meanwhile; ErrStreamEnded when the stream was already settled; ErrInvalid for
// an unknown terminal, a bad row, or a stream that belongs to another session.
func (s *Store) SettleTurn(ctx context.Context, sessionID, streamID string, rows []Message, usage protocol.Usage, terminal string) error {
	return s.SettleTurnWith(ctx, sessionID, streamID, rows, usage, terminal, TurnStats{})
}

// Cost sources of a turn (TurnStats.CostSource, streams.cost_source).
const (
	CostUnknown  = ""         // no cost is known: never a guessed price
	CostProvider = "provider" // the provider reported it (OpenRouter's usage.cost)
	CostPrice    = "price"    // computed from a per-model price the user set
)

// TurnStats are a turn's own figures besides its usage, kept on its stream.
type TurnStats struct {
	Model string `json:"model"` // the model that answered
	// ContextTokens is the prompt tokens of the turn's last model call plus its answer:
	// how full the model's context is after the turn (0 when unknown).
	ContextTokens int64  `json:"context_tokens"`
	CostSource    string `json:"cost_source" ts:"CostSource"` // CostUnknown, CostProvider or CostPrice
}

// SettleTurnWith is SettleTurn that also keeps the turn's own figures on its stream:
// its usage (tokens, cost in USD) and stats.
func (s *Store) SettleTurnWith(ctx context.Context, sessionID, streamID string, rows []Message, usage protocol.Usage, terminal string, stats TurnStats) error {
	op := "settle turn " + streamID + " on " + sessionID
	if streamID == "" {
		return wrap(op, fmt.Errorf("empty stream id: %w", ErrInvalid))
	}
	if !validTerminal(terminal) {
		return wrap(op, fmt.Errorf("unknown terminal %q: %w", terminal, ErrInvalid))
	}
	for i, m := range rows {
		if err := checkRow(m); err != nil {
			return wrap(op, fmt.Errorf("row %d: %w", i, err))
		}
	}
	rows = append([]Message(nil), rows...) // insertRows fills in fields; keep the caller's slice intact
	now := s.now()
	return s.write(ctx, op, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		var owner string
		var ended sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT session_id, ended_at FROM streams WHERE stream_id = ?`, streamID).
			Scan(&owner, &ended)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(ctx, `INSERT INTO streams(stream_id, session_id, started_at, ended_at, terminal)
				VALUES(?, ?, ?, ?, ?)`, streamID, sessionID, now, now, terminal)
		case err != nil:
		case owner != sessionID:
			err = fmt.Errorf("stream %s belongs to session %s: %w", streamID, owner, ErrInvalid)
		case ended.Valid:
			err = fmt.Errorf("stream %s: %w", streamID, ErrStreamEnded)
		default:
			_, err = tx.ExecContext(ctx, `UPDATE streams SET ended_at = ?, terminal = ? WHERE stream_id = ?`,
				now, terminal, streamID)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE streams SET model = ?, input_tokens = ?, output_tokens = ?,
			cache_read_tokens = ?, cache_write_tokens = ?, estimated_cost = ?, cost_source = ?, context_tokens = ?
			WHERE stream_id = ?`, stats.Model, usage.InputTokens, usage.OutputTokens, usage.CacheReadTokens,
			usage.CacheWriteTokens, usage.EstimatedCost, stats.CostSource, stats.ContextTokens, streamID); err != nil {
			return err
		}
		next, err := nextPosition(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if err := insertRows(ctx, tx, sessionID, streamID, next, now, rows); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET
			active_stream_id = CASE WHEN active_stream_id = ? THEN NULL ELSE active_stream_id END,
			message_count = ?,
			input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
			cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
			estimated_cost = estimated_cost + ?,
			revision = revision + 1, updated_at = MAX(updated_at, ?)
			WHERE id = ?`,
			streamID, next+len(rows),
			usage.InputTokens, usage.OutputTokens, usage.CacheReadTokens, usage.CacheWriteTokens, usage.EstimatedCost,
			now, sessionID)
		return err
	})
}

// LiveStreams returns the streams that were admitted and never settled, oldest first.
// After a crash the app settles each with TerminalInterrupted.
func (s *Store) LiveStreams(ctx context.Context) ([]LiveStream, error) {
	out := []LiveStream{}
	err := s.read(ctx, "live streams", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT stream_id, session_id, started_at FROM streams
			WHERE ended_at IS NULL ORDER BY started_at, stream_id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var l LiveStream
			if err := rows.Scan(&l.StreamID, &l.SessionID, &l.StartedAt); err != nil {
				return err
			}
			out = append(out, l)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TurnFigures are one settled turn's figures, for the transcript's per-turn footers,
// the chat's cost and its context meter.
type TurnFigures struct {
	StreamID  string         `json:"stream_id"`
	StartedAt int64          `json:"started_at"` // epoch milliseconds
	EndedAt   int64          `json:"ended_at"`   // epoch milliseconds
	Terminal  string         `json:"terminal"`
	Usage     protocol.Usage `json:"usage"` // tokens, and EstimatedCost in USD
	TurnStats
}

// TurnFiguresOf returns the figures of the settled turn streamID, and false when no
// such turn has ended (it never ran, or still runs). One row is read, whatever the
// chat's length. Errors: store errors.
func (s *Store) TurnFiguresOf(ctx context.Context, streamID string) (TurnFigures, bool, error) {
	var f TurnFigures
	found := false
	err := s.read(ctx, "turn "+streamID, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT stream_id, started_at, ended_at, terminal, model, input_tokens,
			output_tokens, cache_read_tokens, cache_write_tokens, estimated_cost, cost_source, context_tokens
			FROM streams WHERE stream_id = ? AND ended_at IS NOT NULL`, streamID).Scan(&f.StreamID, &f.StartedAt, &f.EndedAt,
			&f.Terminal, &f.Model, &f.Usage.InputTokens, &f.Usage.OutputTokens, &f.Usage.CacheReadTokens,
			&f.Usage.CacheWriteTokens, &f.Usage.EstimatedCost, &f.CostSource, &f.ContextTokens)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		f.Usage.CostReported = f.CostSource == CostProvider
		return nil
	})
	if err != nil {
		return TurnFigures{}, false, err
	}
	return f, found, nil
}

// SessionTurns returns the figures of every settled turn whose rows are in session
// sessionID (a fork's copied rows bring their source turns), oldest first.
// ErrNotFound for a missing or deleted session.
func (s *Store) SessionTurns(ctx context.Context, sessionID string) ([]TurnFigures, error) {
	out := []TurnFigures{}
	err := s.read(ctx, "turns of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT stream_id, started_at, ended_at, terminal, model, input_tokens,
			output_tokens, cache_read_tokens, cache_write_tokens, estimated_cost, cost_source, context_tokens
			FROM streams WHERE ended_at IS NOT NULL AND stream_id IN (SELECT DISTINCT stream_id FROM messages
				WHERE session_id = ? AND stream_id != '')
			ORDER BY started_at, stream_id`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f TurnFigures
			if err := rows.Scan(&f.StreamID, &f.StartedAt, &f.EndedAt, &f.Terminal, &f.Model, &f.Usage.InputTokens,
				&f.Usage.OutputTokens, &f.Usage.CacheReadTokens, &f.Usage.CacheWriteTokens, &f.Usage.EstimatedCost,
				&f.CostSource, &f.ContextTokens); err != nil {
				return err
			}
			f.Usage.CostReported = f.CostSource == CostProvider
			out = append(out, f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
