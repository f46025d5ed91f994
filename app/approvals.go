package app

import (
	"os"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/backend"
	"talaria/backend/store"
)

// Approvals is bound to the window: the answers to what a turn waits on (approvals,
// clarify questions, vault prompts), YOLO, the command allowlist and the approval
// audit log. Approvals fail closed: an answer that no longer matches a waiting card is
// refused (code stale).
type Approvals struct{ app *App }

// RespondApprovalOption answers an ACP agent's permission card with one of the
// options it offered.
func (ap *Approvals) RespondApprovalOption(sessionID, approvalID, optionID string) error {
	return userError(ap.app.service().Approvals().RespondApprovalOption(ap.app.bg(), sessionID, approvalID, optionID))
}

// GetPending returns the session's waiting approval and clarify (heads and counts) and
// whether YOLO is on.
func (ap *Approvals) GetPending(sessionID string) (backend.PendingView, error) {
	v, err := ap.app.service().Approvals().GetPending(ap.app.bg(), sessionID)
	return v, userError(err)
}

// RespondApproval answers an approval card: once, session, always or deny. A card that
// is out of date is refused with a message starting "stale:".
func (ap *Approvals) RespondApproval(sessionID, approvalID, choice string) error {
	return userError(ap.app.service().Approvals().RespondApproval(ap.app.bg(), sessionID, approvalID, choice))
}

// SetYolo turns approvals off or on for a session. fromApprovalID is the card YOLO was
// pressed on ("" from elsewhere); a card that is not the head of the queue is refused.
func (ap *Approvals) SetYolo(sessionID string, on bool, fromApprovalID string) error {
	return userError(ap.app.service().Approvals().SetYolo(ap.app.bg(), sessionID, on, fromApprovalID))
}

// RespondClarify answers a clarify card: one answer per question, text or a list of
// choices.
func (ap *Approvals) RespondClarify(sessionID, clarifyID string, answers []any) error {
	return userError(ap.app.service().Approvals().RespondClarify(ap.app.bg(), sessionID, clarifyID, answers))
}

// DismissElicitation answers an elicitation's card without content: action
// "decline" or "cancel".
func (ap *Approvals) DismissElicitation(sessionID, clarifyID, action string) error {
	return userError(ap.app.service().Approvals().DismissElicitation(ap.app.bg(), sessionID, clarifyID, action))
}

// RespondVault answers a secret request. The reply never contains the secret.
func (ap *Approvals) RespondVault(sessionID, clarifyID string, answer backend.VaultAnswer, remember bool) (backend.VaultResult, error) {
	r, err := ap.app.service().Approvals().RespondVault(ap.app.bg(), sessionID, clarifyID, answer, remember)
	return r, userError(err)
}

// GetAllowlist lists the always-allowed dangerous-command patterns.
func (ap *Approvals) GetAllowlist() ([]backend.AllowRule, error) {
	r, err := ap.app.service().Approvals().GetAllowlist(ap.app.bg())
	return lists(r), userError(err)
}

// RemoveAllowlist forgets an always-allowed pattern.
func (ap *Approvals) RemoveAllowlist(pattern string) error {
	return userError(ap.app.service().Approvals().RemoveAllowlist(ap.app.bg(), pattern))
}

// ListAudit returns the approval audit log's entries f selects, newest first.
func (ap *Approvals) ListAudit(f store.AuditFilter) ([]store.AuditEntry, error) {
	v, err := ap.app.service().Approvals().ListAudit(ap.app.bg(), f)
	return lists(v), userError(err)
}

// ClearAudit empties the approval audit log and returns how many entries it held.
func (ap *Approvals) ClearAudit() (int64, error) {
	n, err := ap.app.service().Approvals().ClearAudit(ap.app.bg())
	return n, userError(err)
}

// ExportAudit asks where to save the audit log entries f selects as CSV (readable by
// the user only) and returns the path; "" when the user cancelled.
func (ap *Approvals) ExportAudit(f store.AuditFilter) (string, error) {
	f.Limit = 0 // every entry the filter selects
	text, err := ap.app.service().Approvals().AuditCSV(ap.app.bg(), f)
	if err != nil {
		return "", userError(err)
	}
	if ap.app.ctx == nil {
		return "", errNotReady
	}
	path, err := runtime.SaveFileDialog(ap.app.ctx, runtime.SaveDialogOptions{
		Title: "Export the approval log", DefaultFilename: "talaria-approvals-" + time.Now().Format("2006-01-02") + ".csv",
		CanCreateDirectories: true, Filters: []runtime.FileFilter{{DisplayName: "CSV (*.csv)", Pattern: "*.csv"}},
	})
	if err != nil {
		return "", fileError("the file dialog failed: %w", err)
	}
	if path == "" {
		return "", nil
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fileError("could not save the approval log: %w", err)
	}
	return path, nil
}
