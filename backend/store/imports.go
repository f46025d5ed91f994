package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxImportedRows is the most rows ImportChat accepts for one chat.
const MaxImportedRows = MaxImportMessages

// ImportedChat is a chat brought over from another history (backend/history): the
// session's metadata and every row, in order.
type ImportedChat struct {
	// Source is the stable key of what was imported ("hermes:<runtime>:<id>",
	// "web:<id>"; at most 512 bytes): a second ImportChat with the same key adds nothing
	// while the first chat is live.
	Source string
	Title  string
	// CreatedAt and UpdatedAt are epoch milliseconds (0: now; UpdatedAt is at least
	// CreatedAt).
	CreatedAt int64
	UpdatedAt int64
	Pinned    bool
	// ArchivedAt is when the chat was archived, epoch ms (0: not archived).
	ArchivedAt int64
	Model      string
	Workspace  string
	// Runtime and AgentSessionID bind the chat to an agent's own session (as
	// SetAgentSession does): a Hermes chat's next turn resumes that session. Runtime ""
	// is RuntimeBuiltin; AgentSessionID "" binds nothing.
	Runtime        string
	AgentSessionID string
	// Messages are the rows at positions 0..n-1 (IDs, SessionID, Position and StreamID
	// are assigned; a zero CreatedAt reads as the chat's CreatedAt). No attachments.
	Messages []Message
}

// ImportChat stores chat as a new session in one transaction: the session (its title,
// times, pinned and archived state, runtime binding), its rows (indexed for search by
// the same transaction) and its import record. It returns the session and true.
//
// When chat.Source is already recorded for a live session, or chat.AgentSessionID is
// already bound to a live chat of chat.Runtime (imported, or made by "Continue here"),
// nothing is written and that session is returned with false.
//
// Errors: *ImportError (errors.Is ErrInvalid) for an empty or over-long Source, too many
// rows, or a bad row (unknown role or kind, text that is not UTF-8, a tool row without
// its call id, attachments); the row is named by its index. The rows are checked as
// they are inserted, so a bad row rolls back the session and every row before it:
// nothing of the chat is left. Store errors (ErrLocked, ErrDiskFull, ...) as for any
// write, and ctx's error when it ends during the transaction (rolled back too).
func (s *Store) ImportChat(ctx context.Context, chat ImportedChat) (Session, bool, error) {
	op := "import chat"
	bad := func(field, format string, args ...any) error {
		return wrap(op, &ImportError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	switch {
	case strings.TrimSpace(chat.Source) == "" || len(chat.Source) > 512 || !utf8.ValidString(chat.Source):
		return Session{}, false, bad("source", "the import key %q is empty, too long or not UTF-8", chat.Source)
	case len(chat.Messages) > MaxImportedRows:
		return Session{}, false, bad("messages", "%d rows, over the limit of %d", len(chat.Messages), MaxImportedRows)
	case !utf8.ValidString(chat.Title):
		return Session{}, false, bad("title", "not UTF-8 text")
	}
	rt := chat.Runtime
	if rt == "" {
		rt = RuntimeBuiltin
	}
	id, err := newSessionID()
	if err != nil {
		return Session{}, false, wrap(op, err)
	}
	now := s.now()
	created := chat.CreatedAt
	if created <= 0 {
		created = now
	}
	updated := max(chat.UpdatedAt, created)
	if chat.UpdatedAt <= 0 {
		updated = max(now, created)
	}
	var archived any
	if chat.ArchivedAt > 0 {
		archived = chat.ArchivedAt
	}
	var out Session
	fresh := false
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		existing, err := importedSession(ctx, tx, chat.Source, rt, chat.AgentSessionID)
		if err != nil {
			return err
		}
		if existing != "" {
			out, err = getSession(ctx, tx, existing)
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions(id, title, model, workspace, created_at, updated_at,
			revision, message_count, pinned, archived_at, runtime, agent_session_id)
			VALUES(?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
			id, chat.Title, chat.Model, chat.Workspace, created, updated, len(chat.Messages),
			chat.Pinned, archived, rt, chat.AgentSessionID); err != nil {
			return err
		}
		for i := range chat.Messages {
			m := chat.Messages[i]
			if err := checkImportedRow(m); err != nil {
				return &ImportError{Field: fmt.Sprintf("messages[%d]", i), Problem: err.Error()}
			}
			m.ID, m.StreamID = 0, ""
			if m.CreatedAt <= 0 {
				m.CreatedAt = created
			}
			if err := insertRows(ctx, tx, id, "", i, now, []Message{m}); err != nil {
				return fmt.Errorf("messages[%d]: %w", i, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO imports(source, session_id, imported_at) VALUES(?, ?, ?)`,
			chat.Source, id, now); err != nil {
			return err
		}
		fresh = true
		out, err = getSession(ctx, tx, id)
		return err
	})
	if err != nil {
		return Session{}, false, err
	}
	return out, fresh, nil
}

// importedSession is the live session already holding source, or the live chat of
// runtime bound to agentSessionID ("" when neither).
func importedSession(ctx context.Context, tx *sql.Tx, source, runtime, agentSessionID string) (string, error) {
	var id string
	err := tx.QueryRowContext(ctx, `SELECT s.id FROM imports i JOIN sessions s ON s.id = i.session_id
		WHERE i.source = ? AND s.deleted_at IS NULL`, source).Scan(&id)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return id, err
	}
	if agentSessionID == "" {
		return "", nil
	}
	err = tx.QueryRowContext(ctx, `SELECT id FROM sessions WHERE deleted_at IS NULL AND agent_session_id = ?
		AND (CASE runtime WHEN '' THEN 'builtin' ELSE runtime END) = ? ORDER BY created_at LIMIT 1`,
		agentSessionID, runtime).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// checkImportedRow is what ImportChat requires of a row.
func checkImportedRow(m Message) error {
	switch m.Role {
	case "system", "user", "assistant", "tool":
	default:
		return fmt.Errorf("unknown role %q (want system, user, assistant or tool)", m.Role)
	}
	if !validKind(m.Kind) {
		return fmt.Errorf("unknown kind %q", m.Kind)
	}
	if m.Role == "tool" && m.ToolCallID == "" {
		return errors.New("a tool result without the id of its call")
	}
	for _, c := range m.ToolCalls {
		if c.ID == "" || c.Function.Name == "" {
			return errors.New("a tool call without an id or a name")
		}
	}
	if len(m.Attachments) > 0 {
		return errors.New("imported rows carry no attachments")
	}
	if m.SummaryCovers != 0 {
		return errors.New("imported rows are no summaries")
	}
	for _, s := range []string{m.Content, m.Reasoning, m.Name, m.ToolCallID} {
		if !utf8.ValidString(s) {
			return errors.New("text that is not UTF-8")
		}
	}
	return nil
}

// ImportedSources maps the import keys starting with prefix whose chat is live to that
// chat's id (e.g. prefix "hermes:hermes:" for what was imported from Hermes's default
// profile).
func (s *Store) ImportedSources(ctx context.Context, prefix string) (map[string]string, error) {
	out := map[string]string{}
	err := s.read(ctx, "imported sources", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT i.source, i.session_id FROM imports i JOIN sessions s ON s.id = i.session_id
			WHERE s.deleted_at IS NULL AND substr(i.source, 1, ?) = ?`, len(prefix), prefix)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var src, id string
			if err := rows.Scan(&src, &id); err != nil {
				return err
			}
			out[src] = id
		}
		return rows.Err()
	})
	return out, err
}
