package app

import (
	"os"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/backend"
	"talaria/backend/store"
)

// The sandbox in the window: each chat's policy and workspace (its header), the
// defaults (Settings), and the approval audit log (its panel and CSV export).

// GetSessionSandbox returns a chat's sandbox policy.
func (a *App) GetSessionSandbox(sessionID string) (backend.SessionSandbox, error) {
	v, err := a.service().GetSessionSandbox(a.bg(), sessionID)
	return v, userError(err)
}

// SetSessionSandbox sets a chat's sandbox policy (read-only, workspace-write or
// full-access; network on or off), from its next command on.
func (a *App) SetSessionSandbox(sessionID string, v backend.SessionSandbox) error {
	return userError(a.service().SetSessionSandbox(a.bg(), sessionID, v))
}

// GetDefaultSandbox returns the policy new chats start with.
func (a *App) GetDefaultSandbox() (backend.SessionSandbox, error) {
	v, err := a.service().DefaultSandbox(a.bg())
	return v, userError(err)
}

// SetDefaultSandbox sets the policy new chats start with (never full access).
func (a *App) SetDefaultSandbox(v backend.SessionSandbox) error {
	return userError(a.service().SetDefaultSandbox(a.bg(), v))
}

// SetSessionWorkspace sets the folder a chat works in. A folder that holds the app's
// data folder is refused with a message saying why.
func (a *App) SetSessionWorkspace(sessionID, path string) (store.Session, error) {
	s, err := a.service().SetSessionWorkspace(a.bg(), sessionID, path)
	return s, userError(err)
}

// ChooseFolder asks the user for a folder (starting at start); "" when cancelled.
func (a *App) ChooseFolder(title, start string) (string, error) {
	if a.ctx == nil {
		return "", errNotReady
	}
	return runtime.OpenDirectoryDialog(a.ctx, runtime.OpenDialogOptions{Title: title, DefaultDirectory: start, CanCreateDirectories: true})
}

// ListAudit returns the approval audit log's entries f selects, newest first.
func (a *App) ListAudit(f store.AuditFilter) ([]store.AuditEntry, error) {
	v, err := a.service().ListAudit(a.bg(), f)
	return v, userError(err)
}

// ClearAudit empties the approval audit log and returns how many entries it held.
func (a *App) ClearAudit() (int64, error) {
	n, err := a.service().ClearAudit(a.bg())
	return n, userError(err)
}

// ExportAudit asks where to save the audit log entries f selects as CSV (readable by
// the user only) and returns the path; "" when the user cancelled.
func (a *App) ExportAudit(f store.AuditFilter) (string, error) {
	f.Limit = 0 // every entry the filter selects
	text, err := a.service().AuditCSV(a.bg(), f)
	if err != nil {
		return "", userError(err)
	}
	if a.ctx == nil {
		return "", errNotReady
	}
	path, err := runtime.SaveFileDialog(a.ctx, runtime.SaveDialogOptions{
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

// SetDefaultWorkspace sets the folder new chats start in (Settings).
func (a *App) SetDefaultWorkspace(path string) (string, error) {
	p, err := a.service().SetDefaultWorkspace(a.bg(), path)
	return p, userError(err)
}
