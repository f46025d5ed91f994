package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"talaria/sidecar/protocol"
)

// The JSON export format: a versioned document holding one session and all its rows.
const (
	// ExportFormat is the document's "format" member.
	ExportFormat = "talaria.session"
	// ExportVersion is the newest document version this build writes and reads.
	// Version 1: {format, version, exported_at, app_version, session, messages}.
	// Version 2: messages may carry attachments (with their bytes, base64, in data),
	// summary rows (kind "summary", summary_covers) and the session its options.
	ExportVersion = 2
	// MaxImportBytes is the largest document ImportSession accepts: 256 MiB.
	MaxImportBytes = 256 << 20
	// MaxImportMessages is the most rows ImportSession accepts in one document.
	MaxImportMessages = 1_000_000
)

// Export is the JSON export of one session (format ExportFormat, version
// ExportVersion). Message IDs and session ids in it are informational: ImportSession
// assigns new ones.
type Export struct {
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	ExportedAt int64           `json:"exported_at"` // epoch milliseconds
	AppVersion string          `json:"app_version"` // the Talaria that wrote it
	Session    ExportedSession `json:"session"`
	Messages   []Message       `json:"messages"` // ordered by position
}

// ExportedSession is the session part of an Export.
type ExportedSession struct {
	ID          string         `json:"id"`
	Title       string         `json:"title"`
	TitleManual bool           `json:"title_manual"`
	Model       string         `json:"model"`
	Workspace   string         `json:"workspace"`
	CreatedAt   int64          `json:"created_at"` // epoch milliseconds
	UpdatedAt   int64          `json:"updated_at"` // epoch milliseconds
	Usage       protocol.Usage `json:"usage"`      // tokens, and USD
	ForkedFrom  string         `json:"forked_from,omitempty"`
	// Options are the chat's own settings (version 2); omitted when the defaults.
	Options JSONObject `json:"options,omitempty"`
}

// ImportError says why ImportSession refused a document: Field is where the problem is
// (a JSON path such as "messages[3].role", "" for the whole document) and Problem what
// it is. errors.Is(err, ErrInvalid) holds. Nothing was written.
type ImportError struct {
	Field   string
	Problem string
}

func (e *ImportError) Error() string {
	where := ""
	if e.Field != "" {
		where = e.Field + ": "
	}
	return "cannot import this file: " + where + e.Problem
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ImportError) Unwrap() error { return ErrInvalid }

// ExportSession reads the session and all its rows in one snapshot and returns them as
// an Export document (ExportedAt now, epoch ms). Errors: ErrNotFound when the session
// does not exist or was deleted.
func (s *Store) ExportSession(ctx context.Context, sessionID, appVersion string) (Export, error) {
	out := Export{Format: ExportFormat, Version: ExportVersion, ExportedAt: s.now(), AppVersion: appVersion}
	err := s.read(ctx, "export session "+sessionID, func(tx *sql.Tx) error {
		sess, err := getSession(ctx, tx, sessionID)
		if err != nil {
			return fmt.Errorf("session %s: %w", sessionID, err)
		}
		out.Session = ExportedSession{ID: sess.ID, Title: sess.Title, TitleManual: sess.TitleManual, Model: sess.Model,
			Workspace: sess.Workspace, CreatedAt: sess.CreatedAt, UpdatedAt: sess.UpdatedAt, Usage: sess.Usage,
			ForkedFrom: sess.ForkedFrom}
		if sess.Options != "{}" && sess.Options != "" {
			out.Session.Options = sess.Options
		}
		out.Messages, err = messagesOf(ctx, tx, sessionID)
		return err
	})
	if err != nil {
		return Export{}, err
	}
	return out, nil
}

// ImportSession validates a JSON document written by ExportSession (this version or an
// older one) and stores it as a new session in one transaction: a new session id and
// new row IDs, the document's title, model, usage, CreatedAt and row times, UpdatedAt
// now (so it shows at the top of the list), rows at positions 0..n-1 in the
// document's order. It returns the new session.
//
// An export is a file that may come from anyone, so nothing in it may decide what the
// agent is allowed to do or is told in secret: the document's workspace is not taken
// (the chat works in Settings' workspace) and of its options only importedOptionKeys
// are kept; its sandbox (full access, network), custom instructions, MCP servers and
// toolsets are dropped, and the chat starts with the defaults (a crafted "shared
// conversation" once ran its next command with full access under a hidden instruction).
//
// Errors: *ImportError (errors.Is ErrInvalid) when the data is too big, not JSON, not
// a Talaria session export, from a newer Talaria, or has a bad row (unknown role or
// kind, positions out of order, text that is not UTF-8); nothing is written then.
func (s *Store) ImportSession(ctx context.Context, data []byte) (Session, error) {
	op := "import session"
	doc, err := decodeExport(data)
	if err != nil {
		return Session{}, wrap(op, err)
	}
	id, err := newSessionID()
	if err != nil {
		return Session{}, wrap(op, err)
	}
	now := s.now()
	in := doc.Session
	created := in.CreatedAt
	if created <= 0 {
		created = now
	}
	var out Session
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		opts, err := normOptions(importedOptions(in.Options))
		if err != nil {
			opts = "{}" // validated in decodeExport; a bad value reads as the defaults
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions(id, title, title_manual, model, workspace,
			created_at, updated_at, revision, message_count,
			input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, estimated_cost, options)
			VALUES(?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)`,
			id, in.Title, in.TitleManual, in.Model, "", created, max(now, created), len(doc.Messages),
			in.Usage.InputTokens, in.Usage.OutputTokens, in.Usage.CacheReadTokens, in.Usage.CacheWriteTokens,
			in.Usage.EstimatedCost, opts); err != nil {
			return err
		}
		rows := doc.Messages
		for i := range rows {
			rows[i].ID = 0
			for j := range rows[i].Attachments {
				a := &rows[i].Attachments[j]
				a.ID, a.SessionID, a.MessageID, a.Data = "", "", 0, nil // new rows; the bytes were stored by the caller
			}
		}
		if err := insertRows(ctx, tx, id, "", 0, now, rows); err != nil {
			return err
		}
		out, err = getSession(ctx, tx, id)
		return err
	})
	return out, err
}

// importedOptionKeys are the members of an exported chat's options ImportSession
// keeps: how long and how hard the model answers, which change nothing the agent may do.
var importedOptionKeys = []string{"reasoning_effort", "max_output_tokens"}

// importedOptions is o with only importedOptionKeys ("{}" when none, or when o is not
// a JSON object).
func importedOptions(o JSONObject) JSONObject {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(o), &m); err != nil {
		return "{}"
	}
	kept := map[string]json.RawMessage{}
	for _, k := range importedOptionKeys {
		if v, ok := m[k]; ok {
			kept[k] = v
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return "{}"
	}
	return JSONObject(b)
}

// decodeExport parses and validates an export document.
func decodeExport(data []byte) (Export, error) {
	bad := func(field, format string, args ...any) error {
		return &ImportError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxImportBytes {
		return Export{}, bad("", "it is %d bytes, over the %d MiB limit", len(data), MaxImportBytes>>20)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Export{}, bad("", "it is empty")
	}
	if !utf8.Valid(data) {
		return Export{}, bad("", "it is not UTF-8 text")
	}
	// First the envelope, so a newer version is reported as such even if its shape
	// changed.
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Export{}, bad("", "it is not a JSON object (%v)", jsonProblem(err))
	}
	switch {
	case head.Format != ExportFormat:
		return Export{}, bad("format", "%q is not a Talaria session export (want %q)", head.Format, ExportFormat)
	case head.Version > ExportVersion:
		return Export{}, bad("version", "version %d was written by a newer Talaria (this one reads up to %d): update Talaria to import it",
			head.Version, ExportVersion)
	case head.Version < 1:
		return Export{}, bad("version", "version %d is not valid", head.Version)
	}
	var doc Export
	if err := json.Unmarshal(data, &doc); err != nil {
		return Export{}, bad("", "%v", jsonProblem(err))
	}
	if doc.Messages == nil {
		return Export{}, bad("messages", "missing")
	}
	if len(doc.Messages) > MaxImportMessages {
		return Export{}, bad("messages", "%d rows, over the limit of %d", len(doc.Messages), MaxImportMessages)
	}
	if utf8.RuneCountInString(doc.Session.Title) > 10*MaxTitleRunes {
		return Export{}, bad("session.title", "longer than %d characters", 10*MaxTitleRunes)
	}
	for i, m := range doc.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			return Export{}, bad(field+".role", "unknown role %q (want system, user, assistant or tool)", m.Role)
		}
		if !validKind(m.Kind) {
			return Export{}, bad(field+".kind", "unknown kind %q", m.Kind)
		}
		if i > 0 && m.Position <= doc.Messages[i-1].Position {
			return Export{}, bad(field+".position", "position %d does not follow %d: rows must be in order",
				m.Position, doc.Messages[i-1].Position)
		}
		if m.CreatedAt < 0 {
			return Export{}, bad(field+".created_at", "negative time %d", m.CreatedAt)
		}
		if m.SummaryCovers < 0 || (m.SummaryCovers > 0 && (m.Kind != KindSummary || m.SummaryCovers > i)) {
			return Export{}, bad(field+".summary_covers", "%d does not fit a %q row at index %d", m.SummaryCovers, m.Kind, i)
		}
		if len(m.Attachments) > 0 && m.Role != "user" {
			return Export{}, bad(field+".attachments", "only user rows carry attachments")
		}
		for j, a := range m.Attachments {
			if err := checkAttachment(a); err != nil {
				return Export{}, bad(fmt.Sprintf("%s.attachments[%d]", field, j), "%s", strings.TrimSuffix(err.Error(), ": "+ErrInvalid.Error()))
			}
		}
	}
	if _, err := normOptions(doc.Session.Options); err != nil {
		return Export{}, bad("session.options", "not a JSON object")
	}
	return doc, nil
}

// jsonProblem describes a JSON decoding error without Go type names where possible.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s has the wrong type (%s)", typ.Field, typ.Value)
	}
	return err.Error()
}

// messagesOf reads the session's rows in position order.
func messagesOf(ctx context.Context, tx *sql.Tx, sessionID string) ([]Message, error) {
	return messagesFrom(ctx, tx, sessionID, 0)
}

// messagesFrom returns the session's rows at positions from on, in order, with their
// attachments.
func messagesFrom(ctx context.Context, tx *sql.Tx, sessionID string, from int) ([]Message, error) {
	out := []Message{}
	rows, err := tx.QueryContext(ctx, `SELECT id, session_id, position, role, content, reasoning,
		COALESCE(tool_calls, ''), tool_call_id, name, kind, stream_id, created_at, summary_covers,
		COALESCE(app_error, '')
		FROM messages WHERE session_id = ? AND position >= ? ORDER BY position`, sessionID, from)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if err := attachTo(ctx, tx, sessionID, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Markdown renders the export for people: the title, a line of facts, then each row
// under a heading (You, Assistant, Tool result, System), reasoning as a quote, tool
// calls and results in code fences long enough for any backticks inside, and the
// cancelled/error/interrupted markers as italic notes. Times are shown in loc (UTC
// when nil).
func (e Export) Markdown(loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	when := func(ms int64) string { return time.UnixMilli(ms).In(loc).Format("2006-01-02 15:04 MST") }
	var b strings.Builder
	title := e.Session.Title
	if strings.TrimSpace(title) == "" {
		title = "Untitled conversation"
	}
	fmt.Fprintf(&b, "# %s\n\n", strings.Join(strings.Fields(title), " "))
	var facts []string
	if e.Session.Model != "" {
		facts = append(facts, "Model: `"+e.Session.Model+"`")
	}
	if e.Session.Workspace != "" {
		facts = append(facts, "Folder: `"+e.Session.Workspace+"`")
	}
	facts = append(facts, "Started: "+when(e.Session.CreatedAt), fmt.Sprintf("Messages: %d", len(e.Messages)))
	if u := e.Session.Usage; u.InputTokens+u.OutputTokens > 0 {
		facts = append(facts, fmt.Sprintf("Tokens: %d in, %d out", u.InputTokens, u.OutputTokens))
	}
	b.WriteString(strings.Join(facts, " · ") + "\n\n")
	fmt.Fprintf(&b, "*Exported from Talaria on %s.*\n", when(e.ExportedAt))
	for _, m := range e.Messages {
		switch m.Kind {
		case KindCancelled:
			b.WriteString("\n*Stopped by the user.*\n")
			continue
		case KindInterrupted:
			b.WriteString("\n*Interrupted: Talaria stopped while this turn was running.*\n")
			continue
		case KindTruncated:
			if m.Content == protocol.TruncatedContentFilter {
				b.WriteString("\n*Cut off: the provider's content filter stopped the answer.*\n")
			} else {
				b.WriteString("\n*Cut off: the model reached its output limit.*\n")
			}
			continue
		case KindError:
			fmt.Fprintf(&b, "\n*Error: %s*\n", strings.Join(strings.Fields(m.Content), " "))
			continue
		case KindSummary:
			fmt.Fprintf(&b, "\n*The %d messages above this point were summarised for the model:*\n\n", m.SummaryCovers)
			for _, line := range strings.Split(strings.TrimRight(m.Content, "\n"), "\n") {
				b.WriteString(strings.TrimRight("> "+line, " ") + "\n")
			}
			continue
		}
		switch m.Role {
		case "user":
			b.WriteString("\n---\n\n## You\n\n")
		case "assistant":
			b.WriteString("\n## Assistant\n\n")
		case "tool":
			name := m.Name
			if name == "" {
				name = "tool"
			}
			fmt.Fprintf(&b, "\n### Result of `%s`\n\n", name)
			b.WriteString(fenced(m.Content, "text"))
			continue
		default: // system
			b.WriteString("\n## System\n\n")
		}
		if m.Reasoning != "" {
			for _, line := range strings.Split(strings.TrimRight(m.Reasoning, "\n"), "\n") {
				b.WriteString(strings.TrimRight("> "+line, " ") + "\n")
			}
		}
		if m.Content != "" {
			if m.Reasoning != "" {
				b.WriteString("\n")
			}
			b.WriteString(strings.TrimRight(m.Content, "\n") + "\n")
		}
		for _, a := range m.Attachments {
			fmt.Fprintf(&b, "\n*Attached: %s (%s, %d bytes)*\n", strings.Join(strings.Fields(a.Name), " "), a.MIMEType, a.Size)
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "\n**Tool call** `%s`\n\n", c.Function.Name)
			b.WriteString(fenced(c.Function.Arguments, "json"))
		}
	}
	return b.String()
}

// fenced puts text in a code fence longer than any run of backticks inside it.
func fenced(text, lang string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}
