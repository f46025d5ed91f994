package store

import (
	"context"
	"database/sql"
	"strings"
)

// The approval audit log (schema_v5.sql): every decision about something the agent
// wanted to run. Rows outlive their chat; only ClearAudit removes them.

// Audit kinds.
const (
	AuditCommand  = "command"   // a shell command
	AuditToolCall = "tool_call" // another tool's call (e.g. an MCP tool)
)

// Audit decisions.
const (
	DecisionOnce        = "once"
	DecisionSession     = "session"
	DecisionAlways      = "always"
	DecisionDeny        = "deny"
	DecisionTimeout     = "timeout"
	DecisionYolo        = "yolo"
	DecisionAllowed     = "allowed"     // a grant or the always-list let it through; DecidedBy says which
	DecisionRefused     = "refused"     // never run (a hardline pattern)
	DecisionInterrupted = "interrupted" // the turn ended before an answer
)

// MaxAuditSubject bounds an entry's subject, in bytes (longer ones are cut).
const MaxAuditSubject = 16 << 10

// AuditEntry is one decision. CreatedAt is epoch ms (now when 0). Kind is AuditCommand
// or AuditToolCall; Tool names the tool of a tool call; Subject is the command or the
// call's arguments (already redacted by the caller); Pattern and Description say why it
// was asked; Decision is one of the Decision* values; DecidedBy says who or what
// decided ("user", "timeout", "yolo", "session grant", "always-list", "hardline",
// "agent"); Policy is the chat's sandbox policy at the time.
type AuditEntry struct {
	ID           int64  `json:"id"`
	CreatedAt    int64  `json:"created_at"`
	SessionID    string `json:"session_id"`
	SessionTitle string `json:"session_title"`
	StreamID     string `json:"stream_id"`
	Runtime      string `json:"runtime"`
	Kind         string `json:"kind"`
	Tool         string `json:"tool"`
	Subject      string `json:"subject"`
	Pattern      string `json:"pattern"`
	Description  string `json:"description"`
	Decision     string `json:"decision"`
	DecidedBy    string `json:"decided_by"`
	Policy       string `json:"policy"`
}

// AppendAudit records one decision and returns its id. A subject over MaxAuditSubject
// is cut on a character boundary.
func (s *Store) AppendAudit(ctx context.Context, e AuditEntry) (int64, error) {
	if e.CreatedAt == 0 {
		e.CreatedAt = s.now()
	}
	if e.Kind == "" {
		e.Kind = AuditCommand
	}
	e.Subject = cutUTF8(e.Subject, MaxAuditSubject)
	var id int64
	err := s.write(ctx, "append audit", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO approval_audit(created_at, session_id, session_title, stream_id, runtime,
			kind, tool, subject, pattern, description, decision, decided_by, policy) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			e.CreatedAt, e.SessionID, e.SessionTitle, e.StreamID, e.Runtime, e.Kind, e.Tool, e.Subject, e.Pattern,
			e.Description, e.Decision, e.DecidedBy, e.Policy)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	return id, err
}

// AuditFilter selects entries: of one session ("" all), a decision ("" all), a text
// in the subject, pattern or session title (case-insensitive, "" all); at most Limit
// (default 500, at most 10,000), newest first, BeforeID for the next page (0 from the
// newest).
type AuditFilter struct {
	// Every member is optional (omitempty): the window sends only what it filters on.
	SessionID string `json:"session_id,omitempty"`
	Decision  string `json:"decision,omitempty"`
	Text      string `json:"text,omitempty"`
	Limit     int    `json:"limit,omitempty"`
	BeforeID  int64  `json:"before_id,omitempty"`
}

// ListAudit returns the entries f selects, newest first.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	if f.Limit <= 0 {
		f.Limit = 500
	}
	f.Limit = min(f.Limit, 10000)
	var out []AuditEntry
	err := s.EachAudit(ctx, f, func(e AuditEntry) error {
		out = append(out, e)
		return nil
	})
	if out == nil {
		out = []AuditEntry{}
	}
	return out, err
}

// EachAudit calls fn for every entry f selects, newest first (Limit 0: all of them).
func (s *Store) EachAudit(ctx context.Context, f AuditFilter, fn func(AuditEntry) error) error {
	var where []string
	var args []any
	if f.SessionID != "" {
		where = append(where, "session_id = ?")
		args = append(args, f.SessionID)
	}
	if f.Decision != "" {
		where = append(where, "decision = ?")
		args = append(args, f.Decision)
	}
	if t := strings.TrimSpace(f.Text); t != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.ToLower(t)) + "%"
		where = append(where, `(lower(subject) LIKE ? ESCAPE '\' OR lower(pattern) LIKE ? ESCAPE '\' OR lower(session_title) LIKE ? ESCAPE '\')`)
		args = append(args, like, like, like)
	}
	if f.BeforeID > 0 {
		where = append(where, "id < ?")
		args = append(args, f.BeforeID)
	}
	q := `SELECT id, created_at, session_id, session_title, stream_id, runtime, kind, tool, subject, pattern, description,
		decision, decided_by, policy FROM approval_audit`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return s.read(ctx, "list audit", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e AuditEntry
			if err := rows.Scan(&e.ID, &e.CreatedAt, &e.SessionID, &e.SessionTitle, &e.StreamID, &e.Runtime, &e.Kind, &e.Tool,
				&e.Subject, &e.Pattern, &e.Description, &e.Decision, &e.DecidedBy, &e.Policy); err != nil {
				return err
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// ClearAudit removes every entry and returns how many there were.
func (s *Store) ClearAudit(ctx context.Context) (int64, error) {
	var n int64
	err := s.write(ctx, "clear audit", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM approval_audit`)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// cutUTF8 cuts s to at most n bytes on a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
