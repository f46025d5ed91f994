package backend

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"time"

	"talaria/backend/bus"
	"talaria/backend/store"
)

// The approval audit log: every decision about a command or tool call the agent wanted
// to run (asked and answered, timed out, interrupted, or decided without asking: YOLO,
// a grant, the always-list, a hardline refusal), kept in SQLite (store.AuditEntry),
// shown in a window panel and exported as CSV. Deleting a chat keeps its rows; only
// ClearAudit removes them.

// EventAuditChanged tells the window the audit log changed (no payload).
const EventAuditChanged = "audit_changed"

// RecordDecision adds one decision to the audit log: the general writer every runtime
// and tool source uses (the turn runner records what sidecars report; an MCP client of
// the host may record its own). Empty SessionTitle is filled from the session; the
// subject and description are redacted. Errors: the store's.
func (area *ApprovalsArea) RecordDecision(ctx context.Context, e store.AuditEntry) error {
	s := area.s
	if e.SessionTitle == "" && e.SessionID != "" {
		if sess, err := s.Store.GetSession(ctx, e.SessionID); err == nil {
			e.SessionTitle = sess.Title
			if sess.ParentID != "" && e.SessionTitle == "" {
				if parent, err := s.Store.GetSession(ctx, sess.ParentID); err == nil {
					e.SessionTitle = parent.Title + " (background task)"
				}
			}
		}
	}
	e.Subject = s.Vault.RedactString(e.Subject)
	e.Description = s.Vault.RedactString(e.Description)
	if _, err := s.Store.AppendAudit(ctx, e); err != nil {
		return err
	}
	s.Bus.Publish(bus.Event{Name: EventAuditChanged})
	return nil
}

// recordAudit is the runner's Audit hook.
func (s *Service) recordAudit(e store.AuditEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Approvals().RecordDecision(ctx, e); err != nil {
		s.Log.Error("writing the approval audit log", "err", err, "pattern", e.Pattern, "decision", e.Decision)
	}
}

// ListAudit returns the audit entries f selects, newest first (at most 500 unless f
// says otherwise).
func (area *ApprovalsArea) ListAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditEntry, error) {
	s := area.s
	return s.Store.ListAudit(ctx, f)
}

// ClearAudit removes every audit entry and returns how many there were.
func (area *ApprovalsArea) ClearAudit(ctx context.Context) (int64, error) {
	s := area.s
	n, err := s.Store.ClearAudit(ctx)
	if err == nil {
		s.Log.Info("approval audit log cleared", "entries", n)
		s.Bus.Publish(bus.Event{Name: EventAuditChanged})
	}
	return n, err
}

// AuditCSV returns the entries f selects (all of them when f.Limit is 0) as CSV (RFC
// 4180, a header row, times in UTC RFC 3339), newest first. A cell that a spreadsheet
// would read as a formula (starting with =, +, - or @) is prefixed with a quote.
func (area *ApprovalsArea) AuditCSV(ctx context.Context, f store.AuditFilter) (string, error) {
	s := area.s
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"time", "decision", "decided_by", "kind", "tool", "pattern", "subject", "description", "policy", "session", "session_id", "runtime", "stream_id", "id"})
	err := s.Store.EachAudit(ctx, f, func(e store.AuditEntry) error {
		return w.Write([]string{
			time.UnixMilli(e.CreatedAt).UTC().Format(time.RFC3339), e.Decision, e.DecidedBy, e.Kind, cell(e.Tool), e.Pattern,
			cell(e.Subject), cell(e.Description), e.Policy, cell(e.SessionTitle), e.SessionID, e.Runtime, e.StreamID,
			strconv.FormatInt(e.ID, 10),
		})
	})
	w.Flush()
	if err != nil {
		return "", err
	}
	return buf.String(), w.Error()
}

// cell guards a CSV cell against formula injection (OWASP, "CSV Injection").
func cell(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r') {
		return "'" + s
	}
	return s
}
