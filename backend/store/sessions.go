package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"talaria/sidecar/protocol"
)

// Session is a conversation's metadata: everything the sidebar needs, no message
// bodies.
type Session struct {
	ID          string `json:"id"` // uuid (version 7: time-ordered)
	Title       string `json:"title"`
	TitleManual bool   `json:"title_manual"` // set by the user; automatic titles no longer apply
	Model       string `json:"model"`
	Workspace   string `json:"workspace"`
	CreatedAt   int64  `json:"created_at"` // epoch milliseconds
	// UpdatedAt is the last turn activity (creation, admission, settlement), epoch
	// milliseconds; it orders ListSessions. Renaming does not change it.
	UpdatedAt      int64  `json:"updated_at"`
	ActiveStreamID string `json:"active_stream_id"` // "" when idle
	// Revision increases by at least one on every change to the session or its rows.
	Revision     int64 `json:"revision"`
	MessageCount int   `json:"message_count"`
	// Usage is the sum of every settled turn's usage: tokens, and EstimatedCost in USD.
	Usage protocol.Usage `json:"usage"`
	// Pinned sessions come first in ListSessions.
	Pinned bool `json:"pinned"`
	// ArchivedAt is when the session was archived, epoch milliseconds; 0 when it is not.
	// ListSessions leaves archived sessions out; ListArchivedSessions lists them.
	ArchivedAt int64 `json:"archived_at"`
	// ForkedFrom is the id of the session this one was forked or duplicated from, ""
	// for an original (or an import).
	ForkedFrom string `json:"forked_from"`
	// Hidden sessions (a background task's, a side question's copy) are left out of
	// ListSessions, ListArchivedSessions and Search; GetSession and Messages read them.
	Hidden bool `json:"hidden"`
	// ParentID is the session a hidden one works for, "" for an ordinary session.
	ParentID string `json:"parent_id"`
	// Runtime is the id of the runtime the chat runs on ("builtin", "hermes:<profile>",
	// "acp:<agent id>"); never "" (rows older than schema 4 read as RuntimeBuiltin).
	Runtime string `json:"runtime"`
	// AgentSessionID is the runtime's own session for this chat ("" until the agent
	// names one, and for the built-in runtime); it is cleared when Runtime changes.
	AgentSessionID string `json:"agent_session_id"`
	// Options are the chat's own settings, a JSON object ("{}" = Settings' defaults);
	// backend.ChatOptions gives them meaning.
	Options JSONObject `json:"options" ts_type:"Record<string, any>"`
}

// RuntimeBuiltin is the runtime id of the built-in runtime, the one every session had
// before runtimes could be chosen.
const RuntimeBuiltin = "builtin"

// NewSession is the input of CreateSession.
type NewSession struct {
	Title     string
	Model     string
	Workspace string
	// Hidden and ParentID make a hidden session working for ParentID (see Session).
	Hidden   bool
	ParentID string
	// Runtime is the runtime id (RuntimeBuiltin when ""); Options a JSON object or nil.
	Runtime string
	Options JSONObject
}

// Message kinds: a normal row has Kind "", markers say how a turn ended badly.
const (
	KindNormal      = ""
	KindCancelled   = "cancelled"   // the user stopped the turn
	KindError       = "error"       // the turn failed (apperror)
	KindInterrupted = "interrupted" // the app or sidecar died during the turn
	// KindTruncated follows an answer the model cut (Content the reason,
	// protocol.TruncatedLength or TruncatedContentFilter): the window offers Continue.
	KindTruncated = "truncated"
	// KindSummary is a summary of older turns (Content the summary, SummaryCovers how
	// many rows from the start it stands for in what is sent to the model).
	KindSummary = "summary"
	// KindEvent is a system note shown as a notice (e.g. "Secret GITHUB_TOKEN
	// provided"), never sent to the model. Reserved: the window shows such rows; the
	// host records none yet.
	KindEvent = "event"
)

// Message is one transcript row (OpenAI-style, plus Reasoning and Kind).
type Message struct {
	ID         int64               `json:"id"` // assigned by the store; never reused
	SessionID  string              `json:"session_id"`
	Position   int                 `json:"position"`       // 0-based, unique within the session
	Role       string              `json:"role" ts:"Role"` // system, user, assistant, tool
	Content    string              `json:"content"`
	Reasoning  string              `json:"reasoning,omitempty"`
	ToolCalls  []protocol.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string              `json:"tool_call_id,omitempty"`
	Name       string              `json:"name,omitempty"`
	Kind       string              `json:"kind,omitempty" ts:"MessageKind"` // KindNormal, KindCancelled, KindError, KindInterrupted, KindTruncated, KindSummary
	StreamID   string              `json:"stream_id,omitempty"`             // the turn that wrote it
	CreatedAt  int64               `json:"created_at"`                      // epoch milliseconds
	// Attachments are the files sent with a user row, in order (none for other rows).
	Attachments []Attachment `json:"attachments,omitempty"`
	// SummaryCovers is, for a KindSummary row, the number of rows from position 0 it
	// stands for in what is sent to the model; 0 for other rows.
	SummaryCovers int `json:"summary_covers,omitempty"`
	// Error is, for a KindError row, the failure it stands for (nil for other rows, and
	// for error rows saved before schema 7).
	Error *RowError `json:"error,omitempty"`
}

// RowError is the failure a KindError row was written for: the apperror frame's Type
// (one of turn's ErrType* constants), short Label, the provider's or agent's Message
// and the Hint that says what to do. Stored as JSON in messages.app_error.
type RowError struct {
	Type    string `json:"type" ts:"AppErrorType"`
	Label   string `json:"label"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// rowErrorJSON is the app_error column's value of e (NULL for nil).
func rowErrorJSON(e *RowError) (any, error) {
	if e == nil {
		return nil, nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// parseRowError reads an app_error column ("" for NULL). An unreadable value is
// dropped (the row's content still says what failed) rather than hiding the chat.
func parseRowError(s string) *RowError {
	if s == "" {
		return nil
	}
	var e RowError
	if json.Unmarshal([]byte(s), &e) != nil {
		return nil
	}
	return &e
}

// ChatMessage returns the row in the protocol's shape (for conversation_history).
func (m Message) ChatMessage() protocol.ChatMessage {
	return protocol.ChatMessage{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning,
		ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name}
}

// sessionCols are the columns of a Session, in scanSession's order. Only metadata: no
// table but sessions is read.
const sessionCols = `id, title, title_manual, model, workspace, created_at, updated_at,
	COALESCE(active_stream_id, ''), revision, message_count,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, estimated_cost,
	pinned, COALESCE(archived_at, 0), forked_from, hidden, parent_id,
	runtime, agent_session_id, options`

// listSessionsSQL is ListSessions' query (kept as a constant so a test can check its
// plan touches no message body and needs no sort).
const listSessionsSQL = `SELECT ` + sessionCols + ` FROM sessions
	WHERE deleted_at IS NULL AND archived_at IS NULL AND hidden = 0
	ORDER BY pinned DESC, updated_at DESC, rowid DESC
	LIMIT ? OFFSET ?`

// listArchivedSQL is ListArchivedSessions' query.
const listArchivedSQL = `SELECT ` + sessionCols + ` FROM sessions
	WHERE deleted_at IS NULL AND archived_at IS NOT NULL AND hidden = 0
	ORDER BY updated_at DESC, rowid DESC
	LIMIT ? OFFSET ?`

type scanner interface{ Scan(dest ...any) error }

func scanSession(row scanner) (Session, error) {
	var s Session
	err := row.Scan(&s.ID, &s.Title, &s.TitleManual, &s.Model, &s.Workspace, &s.CreatedAt, &s.UpdatedAt,
		&s.ActiveStreamID, &s.Revision, &s.MessageCount,
		&s.Usage.InputTokens, &s.Usage.OutputTokens, &s.Usage.CacheReadTokens, &s.Usage.CacheWriteTokens,
		&s.Usage.EstimatedCost, &s.Pinned, &s.ArchivedAt, &s.ForkedFrom, &s.Hidden, &s.ParentID,
		&s.Runtime, &s.AgentSessionID, &s.Options)
	if s.Runtime == "" {
		s.Runtime = RuntimeBuiltin
	}
	return s, err
}

// JSONObject is a JSON object kept as its compact text, so the structs that hold it
// stay comparable; it is marshalled as the object itself ("" as {}).
type JSONObject string

// MarshalJSON writes the object ({} when empty).
func (o JSONObject) MarshalJSON() ([]byte, error) {
	if o == "" {
		return []byte("{}"), nil
	}
	return []byte(o), nil
}

// UnmarshalJSON accepts a JSON object or null (as {}); anything else is an error.
func (o *JSONObject) UnmarshalJSON(b []byte) error {
	t, err := normOptions(JSONObject(b))
	if err != nil {
		return err
	}
	*o = JSONObject(t)
	return nil
}

// Scan reads the TEXT column ("{}" when empty or NULL).
func (o *JSONObject) Scan(v any) error {
	switch t := v.(type) {
	case string:
		*o = JSONObject(t)
	case []byte:
		*o = JSONObject(t)
	case nil:
		*o = ""
	default:
		return fmt.Errorf("options: unexpected %T", v)
	}
	if *o == "" {
		*o = "{}"
	}
	return nil
}

// normOptions checks that an options value is a JSON object of at most 256 KiB and
// returns its compact text ("{}" for "" or null). Errors wrap ErrInvalid.
func normOptions(o JSONObject) (string, error) {
	if o == "" || o == "null" {
		return "{}", nil
	}
	if len(o) > maxOptionsBytes {
		return "", fmt.Errorf("chat options of %d bytes exceed %d: %w", len(o), maxOptionsBytes, ErrInvalid)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(o), &m); err != nil || m == nil {
		return "", fmt.Errorf("chat options must be a JSON object: %w", ErrInvalid)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(o)); err != nil {
		return "", fmt.Errorf("chat options must be a JSON object: %w", ErrInvalid)
	}
	return buf.String(), nil
}

// maxOptionsBytes bounds a session's options (a system prompt is the big member).
const maxOptionsBytes = 256 << 10

// CreateSession stores a new, empty session with a fresh uuid, CreatedAt = UpdatedAt =
// now (epoch ms) and Revision 1, and returns it.
func (s *Store) CreateSession(ctx context.Context, in NewSession) (Session, error) {
	id, err := newSessionID()
	if err != nil {
		return Session{}, wrap("create session", err)
	}
	opts, err := normOptions(in.Options)
	if err != nil {
		return Session{}, wrap("create session", err)
	}
	rt := in.Runtime
	if rt == "" {
		rt = RuntimeBuiltin
	}
	now := s.now()
	out := Session{ID: id, Title: in.Title, Model: in.Model, Workspace: in.Workspace,
		CreatedAt: now, UpdatedAt: now, Revision: 1, Hidden: in.Hidden, ParentID: in.ParentID,
		Runtime: rt, Options: JSONObject(opts)}
	err = s.write(ctx, "create session", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions(id, title, model, workspace, created_at, updated_at, revision,
			hidden, parent_id, runtime, options) VALUES(?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`,
			out.ID, out.Title, out.Model, out.Workspace, now, now, out.Hidden, out.ParentID, rt, opts)
		return err
	})
	if err != nil {
		return Session{}, err
	}
	return out, nil
}

// newSessionID mints a session id: a version 7 (time-ordered) uuid.
func newSessionID() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

// ListSessions returns the sidebar's sessions: live (not deleted), not archived and not
// hidden, pinned ones first, then newest UpdatedAt first (ties: newest created first). It reads
// only the sessions table, never message bodies. limit <= 0 means no limit; a negative
// offset counts as 0.
func (s *Store) ListSessions(ctx context.Context, limit, offset int) ([]Session, error) {
	return s.listSessions(ctx, "list sessions", listSessionsSQL, limit, offset)
}

// ListArchivedSessions returns the archived sessions (not deleted, not hidden), newest UpdatedAt
// first, with ListSessions' limit and offset rules.
func (s *Store) ListArchivedSessions(ctx context.Context, limit, offset int) ([]Session, error) {
	return s.listSessions(ctx, "list archived sessions", listArchivedSQL, limit, offset)
}

func (s *Store) listSessions(ctx context.Context, op, query string, limit, offset int) ([]Session, error) {
	if limit <= 0 {
		limit = -1
	}
	offset = max(offset, 0)
	out := []Session{}
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, limit, offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			sess, err := scanSession(rows)
			if err != nil {
				return err
			}
			out = append(out, sess)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetSession returns one session's metadata. ErrNotFound when it does not exist or was
// deleted.
func (s *Store) GetSession(ctx context.Context, id string) (Session, error) {
	var out Session
	err := s.read(ctx, "get session "+id, func(tx *sql.Tx) error {
		var err error
		out, err = getSession(ctx, tx, id)
		return err
	})
	return out, err
}

func getSession(ctx context.Context, tx *sql.Tx, id string) (Session, error) {
	sess, err := scanSession(tx.QueryRowContext(ctx,
		`SELECT `+sessionCols+` FROM sessions WHERE id = ? AND deleted_at IS NULL`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	return sess, err
}

// sessionState is what a write checks before touching a session.
type sessionState struct {
	activeStream string // "" when idle
	titleManual  bool
}

// liveSession loads the state of a session that exists and is not deleted, else
// ErrNotFound.
func liveSession(ctx context.Context, tx *sql.Tx, id string) (sessionState, error) {
	var st sessionState
	var deleted sql.NullInt64
	err := tx.QueryRowContext(ctx,
		`SELECT COALESCE(active_stream_id, ''), title_manual, deleted_at FROM sessions WHERE id = ?`, id).
		Scan(&st.activeStream, &st.titleManual, &deleted)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && deleted.Valid) {
		return st, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	return st, err
}

// Messages returns the session's rows ordered by Position. ErrNotFound when the
// session does not exist or was deleted.
func (s *Store) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	var out []Message
	err := s.read(ctx, "messages of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		var err error
		out, err = messagesOf(ctx, tx, sessionID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MessagesForTurn returns what a turn of session sessionID needs of its transcript: its
// rows from base on, where base is where the rows its latest summary row does not stand
// for begin (min(SummaryCovers, that row's position); 0 when the chat has no summary),
// so rows[i] is at position base+i. A turn of a long, summarised chat reads its tail, not
// every row (issue 24, item 4). Errors: ErrNotFound when the session does not exist or
// was deleted; store errors.
func (s *Store) MessagesForTurn(ctx context.Context, sessionID string) (rows []Message, base int, err error) {
	err = s.read(ctx, "messages of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		var pos, covers int
		switch err := tx.QueryRowContext(ctx, `SELECT position, summary_covers FROM messages
			WHERE session_id = ? AND kind = 'summary' ORDER BY position DESC LIMIT 1`, sessionID).Scan(&pos, &covers); {
		case errors.Is(err, sql.ErrNoRows):
			base = 0
		case err != nil:
			return err
		default:
			base = max(min(covers, pos), 0)
		}
		rows, err = messagesFrom(ctx, tx, sessionID, base)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return rows, base, nil
}

// SetTitle sets the session's title. A manual title (manual true, from the user) always
// applies and marks the title manual; an automatic one (manual false) is ignored,
// returning nil, once the title was set manually. Revision is bumped when the title is
// written; UpdatedAt is not. ErrNotFound when the session does not exist or was
// deleted.
func (s *Store) SetTitle(ctx context.Context, sessionID, title string, manual bool) error {
	return s.write(ctx, "set title of "+sessionID, func(tx *sql.Tx) error {
		st, err := liveSession(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if st.titleManual && !manual {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET title = ?, title_manual = ?, revision = revision + 1
			WHERE id = ?`, title, st.titleManual || manual, sessionID)
		return err
	})
}

// DeleteSession tombstones the session (deleted_at = now, title blanked) and purges its
// messages, journal frames, streams and draft in the same transaction, and with them
// its text in the search index; the sessions row stays, so later writes for it
// (AppendJournal, SettleTurn, SetTitle, SetPinned, SaveDraft, AppendMessages, …) fail
// with ErrNotFound and write nothing: a late turn or title cannot resurrect it. A live
// turn of the session is forgotten (LiveStreams no longer lists it). Deleting a deleted
// session is a no-op; ErrNotFound when it never existed.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.write(ctx, "delete session "+id, func(tx *sql.Tx) error {
		var deleted sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT deleted_at FROM sessions WHERE id = ?`, id).Scan(&deleted)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("session %s: %w", id, ErrNotFound)
		}
		if err != nil || deleted.Valid {
			return err
		}
		for _, q := range []string{
			`DELETE FROM attachments WHERE session_id = ?`,
			`DELETE FROM messages WHERE session_id = ?`,
			`DELETE FROM journal WHERE session_id = ?`,
			`DELETE FROM streams WHERE session_id = ?`,
			`DELETE FROM drafts WHERE session_id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET deleted_at = ?, active_stream_id = NULL, title = '',
			message_count = 0, revision = revision + 1 WHERE id = ?`, s.now(), id)
		return err
	})
}
