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

// Chats is bound to the window: the sessions of the sidebar and their transcripts,
// search, drafts, export and import of one chat, the recovery report, and the folder a
// chat works in (docs/store.md). Errors are messages for the user.
type Chats struct{ app *App }

// NewSession creates an empty session.
func (cs *Chats) NewSession() (store.Session, error) {
	s, err := cs.app.service().Chats().NewSession(cs.app.bg())
	return s, userError(err)
}

// ListSessions lists sessions, newest first.
func (cs *Chats) ListSessions() ([]store.Session, error) {
	s, err := cs.app.service().Chats().ListSessions(cs.app.bg())
	return lists(s), userError(err)
}

// ListSessionsPage lists limit sessions of the sidebar from offset on (pinned, then
// newest first).
func (cs *Chats) ListSessionsPage(offset, limit int) ([]store.Session, error) {
	s, err := cs.app.service().Chats().ListSessionsPage(cs.app.bg(), offset, limit)
	return lists(s), userError(err)
}

// GetTranscript returns a session and the last limit rows of its transcript before
// position before (before < 0: the last rows).
func (cs *Chats) GetTranscript(id string, before, limit int) (backend.TranscriptPage, error) {
	p, err := cs.app.service().Chats().GetTranscript(cs.app.bg(), id, before, limit)
	return lists(p), userError(err)
}

// GetTranscriptFrom returns a session and limit rows of its transcript from position
// from on.
func (cs *Chats) GetTranscriptFrom(id string, from, limit int) (backend.TranscriptPage, error) {
	p, err := cs.app.service().Chats().GetTranscriptFrom(cs.app.bg(), id, from, limit)
	return lists(p), userError(err)
}

// GetSession returns a session and its transcript.
func (cs *Chats) GetSession(id string) (backend.SessionView, error) {
	v, err := cs.app.service().Chats().GetSession(cs.app.bg(), id)
	return lists(v), userError(err)
}

// SetSessionWorkspace sets the folder a chat works in. A folder that holds the app's
// data folder is refused with a message saying why.
func (cs *Chats) SetSessionWorkspace(sessionID, path string) (store.Session, error) {
	s, err := cs.app.service().Chats().SetSessionWorkspace(cs.app.bg(), sessionID, path)
	return s, userError(err)
}

// SetDefaultWorkspace sets the folder new chats start in (Settings).
func (cs *Chats) SetDefaultWorkspace(path string) (string, error) {
	p, err := cs.app.service().Chats().SetDefaultWorkspace(cs.app.bg(), path)
	return p, userError(err)
}

// RenameSession sets a title chosen by the user; automatic titles stop for it.
func (cs *Chats) RenameSession(id, title string) (store.Session, error) {
	s, err := cs.app.service().Chats().RenameSession(cs.app.bg(), id, title)
	if errors.Is(err, store.ErrInvalid) {
		return s, backend.NewUserError(backend.CodeInvalid, "the title is empty: type a name for the conversation", "").WithCause(err)
	}
	return s, userError(err)
}

// PinSession pins (true) or unpins a session; pinned sessions lead the list.
func (cs *Chats) PinSession(id string, pinned bool) (store.Session, error) {
	s, err := cs.app.service().Chats().PinSession(cs.app.bg(), id, pinned)
	return s, userError(err)
}

// ArchiveSession archives (true) or unarchives a session.
func (cs *Chats) ArchiveSession(id string, archived bool) (store.Session, error) {
	s, err := cs.app.service().Chats().ArchiveSession(cs.app.bg(), id, archived)
	return s, userError(err)
}

// ListArchivedSessions lists archived sessions, newest first.
func (cs *Chats) ListArchivedSessions() ([]store.Session, error) {
	s, err := cs.app.service().Chats().ListArchivedSessions(cs.app.bg())
	return lists(s), userError(err)
}

// DeleteSession deletes a session for good (its running turn is stopped first).
func (cs *Chats) DeleteSession(id string) error {
	return userError(cs.app.service().Chats().DeleteSession(cs.app.bg(), id))
}

// DiscardIfEmpty deletes session id when nothing of the user's is in it yet (a new
// chat left before its first message) and reports whether it did.
func (cs *Chats) DiscardIfEmpty(id string) (bool, error) {
	gone, err := cs.app.service().Chats().DiscardIfEmpty(cs.app.bg(), id)
	return gone, userError(err)
}

// ForkSession starts a new session from the rows of session id up to and including
// position. requestKey (a fresh uuid per click) makes a repeated call return the same
// fork.
func (cs *Chats) ForkSession(id string, position int, requestKey string) (store.Session, error) {
	s, err := cs.app.service().Chats().ForkSession(cs.app.bg(), id, position, requestKey)
	return s, forkError(err)
}

// DuplicateSession copies a whole session. requestKey as for ForkSession.
func (cs *Chats) DuplicateSession(id, requestKey string) (store.Session, error) {
	s, err := cs.app.service().Chats().DuplicateSession(cs.app.bg(), id, requestKey)
	return s, forkError(err)
}

// SaveDraft keeps the composer's unsent text of a session ("" clears it).
func (cs *Chats) SaveDraft(id, text string) error {
	err := cs.app.service().Chats().SaveDraft(cs.app.bg(), id, text)
	if errors.Is(err, store.ErrInvalid) {
		return invalid(fmt.Sprintf("the draft is too long to keep (over %d MiB)", store.MaxDraftBytes>>20))
	}
	return userError(err)
}

// GetDraft returns the composer's unsent text of a session.
func (cs *Chats) GetDraft(id string) (store.Draft, error) {
	d, err := cs.app.service().Chats().GetDraft(cs.app.bg(), id)
	return d, userError(err)
}

// SearchSessions searches titles and messages; limit <= 0 means 20. Matched terms in
// SearchHit.Snippet and TitleHighlight are between U+0002 and U+0003: escape the text,
// then turn each pair into <mark>…</mark>.
func (cs *Chats) SearchSessions(query string, limit int) ([]store.SearchHit, error) {
	h, err := cs.app.service().Chats().SearchSessions(cs.app.bg(), query, limit)
	return lists(h), userError(err)
}

// ExportSession asks where to save session id as format "markdown" or "json", writes
// the file (readable by the user only) and returns its path; "" when the user
// cancelled.
func (cs *Chats) ExportSession(id, format string) (string, error) {
	f, err := cs.app.service().Chats().ExportSession(cs.app.bg(), id, format)
	if err != nil {
		return "", exportError(err)
	}
	if cs.app.ctx == nil {
		return "", errNotReady
	}
	pattern := "*.md"
	if format == backend.ExportJSON {
		pattern = "*.json"
	}
	path, err := runtime.SaveFileDialog(cs.app.ctx, runtime.SaveDialogOptions{
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
func (cs *Chats) ExportSessionText(id, format string) (backend.ExportFile, error) {
	f, err := cs.app.service().Chats().ExportSession(cs.app.bg(), id, format)
	return f, exportError(err)
}

// ImportSession asks for a JSON export file and imports it as a new session; the zero
// session (empty ID) when the user cancelled.
func (cs *Chats) ImportSession() (store.Session, error) {
	if cs.app.ctx == nil {
		return store.Session{}, errNotReady
	}
	path, err := runtime.OpenFileDialog(cs.app.ctx, runtime.OpenDialogOptions{
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
	return cs.app.importData(data)
}

// ImportSessionData imports a JSON export given as text (dropped or pasted) as a new
// session.
func (cs *Chats) ImportSessionData(data string) (store.Session, error) {
	return cs.app.importData([]byte(data))
}

// GetRecoveryReport returns what the start-up check recovered from a damaged
// database, until dismissed; Recovered is false when there is nothing to show.
func (cs *Chats) GetRecoveryReport() (store.RecoveryReport, error) {
	r, err := cs.app.service().Chats().RecoveryReport(cs.app.bg())
	return lists(r), userError(err)
}

// DismissRecoveryReport hides the recovery report for good.
func (cs *Chats) DismissRecoveryReport() error {
	return userError(cs.app.service().Chats().DismissRecoveryReport(cs.app.bg()))
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

func exportError(err error) error {
	if errors.Is(err, store.ErrInvalid) {
		return backend.NewUserError(backend.CodeInvalid, "unknown export format: choose Markdown or JSON", "").WithCause(err)
	}
	return userError(err)
}

func (a *App) importData(data []byte) (store.Session, error) {
	s, err := a.service().Chats().ImportSession(a.bg(), data)
	return s, userError(err)
}
