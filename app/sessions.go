package app

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/backend"
	"talaria/backend/store"
)

// Session actions of the sidebar: rename, pin, archive, delete, fork and duplicate,
// drafts, search, export and import, and the start-up recovery report. Errors are
// messages for the user.

// RenameSession sets a title chosen by the user; automatic titles stop for it.
func (a *App) RenameSession(id, title string) (store.Session, error) {
	s, err := a.service().RenameSession(a.bg(), id, title)
	if errors.Is(err, store.ErrInvalid) {
		return s, backend.NewUserError(backend.CodeInvalid, "the title is empty: type a name for the conversation", "").WithCause(err)
	}
	return s, userError(err)
}

// PinSession pins (true) or unpins a session; pinned sessions lead the list.
func (a *App) PinSession(id string, pinned bool) (store.Session, error) {
	s, err := a.service().PinSession(a.bg(), id, pinned)
	return s, userError(err)
}

// ArchiveSession archives (true) or unarchives a session.
func (a *App) ArchiveSession(id string, archived bool) (store.Session, error) {
	s, err := a.service().ArchiveSession(a.bg(), id, archived)
	return s, userError(err)
}

// ListArchivedSessions lists archived sessions, newest first.
func (a *App) ListArchivedSessions() ([]store.Session, error) {
	s, err := a.service().ListArchivedSessions(a.bg())
	return s, userError(err)
}

// DeleteSession deletes a session for good (its running turn is stopped first).
func (a *App) DeleteSession(id string) error {
	return userError(a.service().DeleteSession(a.bg(), id))
}

// DiscardIfEmpty deletes session id when nothing of the user's is in it yet (a new
// chat left before its first message) and reports whether it did.
func (a *App) DiscardIfEmpty(id string) (bool, error) {
	gone, err := a.service().DiscardIfEmpty(a.bg(), id)
	return gone, userError(err)
}

// ForkSession starts a new session from the rows of session id up to and including
// position. requestKey (a fresh uuid per click) makes a repeated call return the same
// fork.
func (a *App) ForkSession(id string, position int, requestKey string) (store.Session, error) {
	s, err := a.service().ForkSession(a.bg(), id, position, requestKey)
	return s, forkError(err)
}

// DuplicateSession copies a whole session. requestKey as for ForkSession.
func (a *App) DuplicateSession(id, requestKey string) (store.Session, error) {
	s, err := a.service().DuplicateSession(a.bg(), id, requestKey)
	return s, forkError(err)
}

func forkError(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return userError(err)
	case errors.Is(err, store.ErrInvalid):
		return backend.NewUserError(backend.CodeConflict, "that message is not in this conversation any more: reload it and try again", "").WithCause(err)
	case errors.Is(err, store.ErrConflict):
		return backend.NewUserError(backend.CodeConflict, "this request was already used for another copy: try again", "").WithCause(err)
	}
	return userError(err)
}

// SaveDraft keeps the composer's unsent text of a session ("" clears it).
func (a *App) SaveDraft(id, text string) error {
	err := a.service().SaveDraft(a.bg(), id, text)
	if errors.Is(err, store.ErrInvalid) {
		return invalid(fmt.Sprintf("the draft is too long to keep (over %d MiB)", store.MaxDraftBytes>>20))
	}
	return userError(err)
}

// GetDraft returns the composer's unsent text of a session.
func (a *App) GetDraft(id string) (store.Draft, error) {
	d, err := a.service().GetDraft(a.bg(), id)
	return d, userError(err)
}

// SearchSessions searches titles and messages; limit <= 0 means 20. Matched terms in
// SearchHit.Snippet and TitleHighlight are between U+0002 and U+0003: escape the text,
// then turn each pair into <mark>…</mark>.
func (a *App) SearchSessions(query string, limit int) ([]store.SearchHit, error) {
	h, err := a.service().SearchSessions(a.bg(), query, limit)
	return h, userError(err)
}

// ExportSession asks where to save session id as format "markdown" or "json", writes
// the file (readable by the user only) and returns its path; "" when the user
// cancelled.
func (a *App) ExportSession(id, format string) (string, error) {
	f, err := a.service().ExportSession(a.bg(), id, format)
	if err != nil {
		return "", exportError(err)
	}
	if a.ctx == nil {
		return "", errNotReady
	}
	pattern := "*.md"
	if format == backend.ExportJSON {
		pattern = "*.json"
	}
	path, err := runtime.SaveFileDialog(a.ctx, runtime.SaveDialogOptions{
		Title: "Export conversation", DefaultFilename: f.Name, CanCreateDirectories: true,
		Filters: []runtime.FileFilter{{DisplayName: f.MIMEType, Pattern: pattern}},
	})
	if err != nil {
		return "", fileError("the file dialog failed: %w", err)
	}
	if path == "" {
		return "", nil
	}
	if err := os.WriteFile(path, []byte(f.Content), 0o600); err != nil {
		return "", fileError("could not save the export: %w", err)
	}
	return path, nil
}

// ExportSessionText returns session id exported as "markdown" or "json", for the
// clipboard.
func (a *App) ExportSessionText(id, format string) (backend.ExportFile, error) {
	f, err := a.service().ExportSession(a.bg(), id, format)
	return f, exportError(err)
}

func exportError(err error) error {
	if errors.Is(err, store.ErrInvalid) {
		return backend.NewUserError(backend.CodeInvalid, "unknown export format: choose Markdown or JSON", "").WithCause(err)
	}
	return userError(err)
}

// ImportSession asks for a JSON export file and imports it as a new session; the zero
// session (empty ID) when the user cancelled.
func (a *App) ImportSession() (store.Session, error) {
	if a.ctx == nil {
		return store.Session{}, errNotReady
	}
	path, err := runtime.OpenFileDialog(a.ctx, runtime.OpenDialogOptions{
		Title:   "Import a conversation",
		Filters: []runtime.FileFilter{{DisplayName: "Talaria export (*.json)", Pattern: "*.json"}},
	})
	if err != nil {
		return store.Session{}, fileError("the file dialog failed: %w", err)
	}
	if path == "" {
		return store.Session{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return store.Session{}, fileError("could not read the file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, store.MaxImportBytes+1))
	if err != nil {
		return store.Session{}, fileError("could not read the file: %w", err)
	}
	return a.importData(data)
}

// ImportSessionData imports a JSON export given as text (dropped or pasted) as a new
// session.
func (a *App) ImportSessionData(data string) (store.Session, error) {
	return a.importData([]byte(data))
}

func (a *App) importData(data []byte) (store.Session, error) {
	s, err := a.service().ImportSession(a.bg(), data)
	return s, userError(err)
}

// GetRecoveryReport returns what the start-up check recovered from a damaged
// database, until dismissed; Recovered is false when there is nothing to show.
func (a *App) GetRecoveryReport() (store.RecoveryReport, error) {
	r, err := a.service().RecoveryReport(a.bg())
	return r, userError(err)
}

// DismissRecoveryReport hides the recovery report for good.
func (a *App) DismissRecoveryReport() error {
	return userError(a.service().DismissRecoveryReport(a.bg()))
}
