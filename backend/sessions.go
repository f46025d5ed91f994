package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"talaria/backend/attachments"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// Session actions of the sidebar, search, export/import, composer drafts and the
// start-up check. Every action that changes what the sidebar shows publishes
// bus.EventSessionsChanged after it succeeds.

// listPage is how many sessions the sidebar lists load at most.
const listPage = 500

// Export formats accepted by ExportSession.
const (
	ExportMarkdown = "markdown"
	ExportJSON     = "json"
)

// ExportFile is an exported session, ready to be saved or copied.
type ExportFile struct {
	// Name is a file name to suggest: the title made safe for file systems, with
	// ".md" or ".talaria.json".
	Name     string `json:"name"`
	MIMEType string `json:"mime_type"` // text/markdown or application/json
	Content  string `json:"content"`
}

// RenameSession gives a session a title chosen by the user (trimmed, at most
// store.MaxTitleRunes characters); automatic titles no longer replace it. Errors:
// store.ErrInvalid for an empty title, store.ErrNotFound.
func (area *ChatsArea) RenameSession(ctx context.Context, id, title string) (store.Session, error) {
	s := area.s
	if n := utf8.RuneCountInString(strings.TrimSpace(title)); n > MaxTitleRunes {
		return store.Session{}, fmt.Errorf("%w: a title has at most %d characters (this one has %d)", store.ErrInvalid, MaxTitleRunes, n)
	}
	sess, err := s.Store.RenameSession(ctx, id, title)
	if err == nil {
		s.core.SessionsChanged()
	}
	return sess, err
}

// PinSession pins (true) or unpins a session; pinned sessions lead the list.
// Errors: store.ErrNotFound.
func (area *ChatsArea) PinSession(ctx context.Context, id string, pinned bool) (store.Session, error) {
	s := area.s
	sess, err := s.Store.SetPinned(ctx, id, pinned)
	if err == nil {
		s.core.SessionsChanged()
	}
	return sess, err
}

// ArchiveSession archives (true) or unarchives a session. Archived sessions leave the
// list for ListArchivedSessions, stay searchable and keep any running turn. Errors:
// store.ErrNotFound.
func (area *ChatsArea) ArchiveSession(ctx context.Context, id string, archived bool) (store.Session, error) {
	s := area.s
	sess, err := s.Store.SetArchived(ctx, id, archived)
	if err == nil {
		s.core.SessionsChanged()
	}
	return sess, err
}

// ListArchivedSessions returns the first 500 archived sessions, newest first
// (metadata only).
func (area *ChatsArea) ListArchivedSessions(ctx context.Context) ([]store.Session, error) {
	s := area.s
	out, err := s.Store.ListArchivedSessions(ctx, listPage, 0)
	if out == nil {
		out = []store.Session{}
	}
	return out, err
}

// DeleteSession stops the session's running turn, if any, and deletes the session
// with its rows, journal and draft; its background tasks are stopped and dismissed and
// its side questions cancelled. The deletion is final: a late answer or title for it
// is dropped. Deleting it twice is a no-op. Errors: store.ErrNotFound when it never
// existed.
func (area *ChatsArea) DeleteSession(ctx context.Context, id string) error {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err == nil && sess.ActiveStreamID != "" {
		_ = s.Runner.Cancel(sess.ActiveStreamID) // it settles into the tombstone and is dropped
	}
	keptBy := ""
	if err == nil {
		if keptBy, err = s.historyKeptBy(ctx, sess); err != nil {
			return err
		}
	}
	if err := s.Store.DeleteSession(ctx, id); err != nil {
		return err
	}
	s.Tasks.ParentDeleted(ctx, id) // its background tasks and side questions go too
	s.Attachments.Sweep(ctx)       // its attachments' files, unless a fork still has them
	// The agent drops what it kept for the session in memory: secrets, grants, todos;
	// an ACP agent closes its session, and deletes it when it offers session/delete and
	// Talaria made it: one continued from the agent's own sessions stays there
	// (historyKeptBy). A refusal is told to the window (EventAgentNotice); the chat is
	// gone anyway.
	if msg := s.core.EvictDeleted(ctx, sess.Runtime, id, sess.AgentSessionID, keptBy == ""); msg != "" {
		s.noticeAgent(id, msg)
	}
	s.Runner.Pending().DropSession(id)
	s.core.SessionsChanged()
	return nil
}

// HistoryKeptBy names the agent that keeps chat id's history when the chat is deleted:
// the chat is bound to one of the agent's own sessions that Talaria did not make (one
// continued from "Agent sessions" or "Hermes sessions", or brought by the Hermes
// history import), so deleting the chat removes it from Talaria only and the session,
// with its earlier messages, stays in the agent. "" for a chat whose agent session, if
// any, Talaria made: deleting the chat deletes that too where the agent offers it. The
// delete dialog says which. Errors: store.ErrNotFound.
func (area *ChatsArea) HistoryKeptBy(ctx context.Context, id string) (string, error) {
	sess, err := area.s.Store.GetSession(ctx, id)
	if err != nil {
		return "", err
	}
	return area.s.historyKeptBy(ctx, sess)
}

// historyKeptBy is HistoryKeptBy of sess. The origin is the chat's import record
// (store.ImportSource): AgentSessionSource of the bound session for a continued one, a
// "hermes:" key for a Hermes import on a Hermes runtime (which never deletes at Hermes).
// A binding made later by Talaria (after the chat moved runtimes) is Talaria's.
func (s *Service) historyKeptBy(ctx context.Context, sess store.Session) (string, error) {
	if sess.AgentSessionID == "" {
		return "", nil
	}
	src, err := s.Store.ImportSource(ctx, sess.ID)
	if err != nil || src == "" {
		return "", err
	}
	hermes := sess.Runtime == protocol.RuntimeHermes || strings.HasPrefix(sess.Runtime, protocol.RuntimeHermes+":")
	switch {
	case src == store.AgentSessionSource(sess.Runtime, sess.AgentSessionID) && !hermes:
		id := strings.TrimPrefix(sess.Runtime, protocol.RuntimeACP+":")
		if a, ok, _ := s.acpAgent(ctx, id); ok && a.Name != "" {
			return a.Name, nil
		}
		return id, nil
	case hermes && (strings.HasPrefix(src, "hermes:") || strings.HasPrefix(src, "agent:")):
		return "Hermes", nil
	}
	return "", nil
}

// DiscardIfEmpty deletes session id when it holds nothing of the user's (no message,
// no turn running, no draft text, no staged file, no background task, no manual title,
// not pinned or archived: store.DeleteIfEmpty) and reports whether it did. The window
// calls it when the user leaves a chat opened with "New chat" before its first message,
// so empty chats do not pile up in the sidebar. Errors: store.ErrNotFound.
func (area *ChatsArea) DiscardIfEmpty(ctx context.Context, id string) (bool, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return false, err
	}
	gone, err := s.Store.DeleteIfEmpty(ctx, id)
	if err != nil || !gone {
		return false, err
	}
	s.core.Evict(ctx, sess.Runtime, id)
	s.Runner.Pending().DropSession(id)
	s.core.SessionsChanged()
	return true, nil
}

// discardEmptySessions deletes, at start-up, the chats a previous run left empty.
func (s *Service) discardEmptySessions(ctx context.Context) {
	n, err := s.Store.DeleteEmptySessions(ctx, s.core.Started().UnixMilli())
	if err != nil {
		s.Log.Warn("removing empty chats failed", "err", err)
	} else if n > 0 {
		s.Log.Info("empty chats removed", "count", n)
	}
}

// ForkSession starts a new session from a copy of session id's rows up to and
// including position (0-based), titled "<title> (fork)". requestKey, when not "",
// makes the call idempotent: the same key with the same session and position returns
// the session the first call made (use one fresh uuid per click). Errors:
// store.ErrNotFound; store.ErrInvalid for a position outside the session;
// store.ErrConflict when requestKey was used for another fork.
func (area *ChatsArea) ForkSession(ctx context.Context, id string, position int, requestKey string) (store.Session, error) {
	s := area.s
	if position < 0 {
		return store.Session{}, fmt.Errorf("cannot fork at position %d: %w", position, store.ErrInvalid)
	}
	return s.fork(ctx, id, position, requestKey, "fork")
}

// DuplicateSession copies session id with all its rows into a new session titled
// "<title> (copy)"; requestKey as for ForkSession.
func (area *ChatsArea) DuplicateSession(ctx context.Context, id, requestKey string) (store.Session, error) {
	s := area.s
	return s.fork(ctx, id, -1, requestKey, "copy")
}

func (s *Service) fork(ctx context.Context, id string, through int, key, suffix string) (store.Session, error) {
	src, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return store.Session{}, err
	}
	title := ""
	if src.Title != "" {
		title = src.Title + " (" + suffix + ")"
	}
	sess, err := s.Store.ForkSession(ctx, store.ForkRequest{SessionID: id, Through: through, Title: title, Key: key})
	if err == nil {
		s.core.SessionsChanged()
	}
	return sess, err
}

// SaveDraft keeps the composer's unsent text of a session ("" removes it). It does not
// publish an event: the window that typed it already knows. Errors: store.ErrInvalid
// over store.MaxDraftBytes, store.ErrNotFound.
func (area *ChatsArea) SaveDraft(ctx context.Context, id, text string) error {
	s := area.s
	return s.Store.SaveDraft(ctx, id, text)
}

// GetDraft returns the session's unsent text (empty when none). Errors:
// store.ErrNotFound.
func (area *ChatsArea) GetDraft(ctx context.Context, id string) (store.Draft, error) {
	s := area.s
	return s.Store.Draft(ctx, id)
}

// SearchSessions finds sessions by title and message text (see store.Search for the
// query rules, ranking and highlight markers); limit <= 0 means
// store.DefaultSearchLimit.
func (area *ChatsArea) SearchSessions(ctx context.Context, query string, limit int) ([]store.SearchHit, error) {
	s := area.s
	out, err := s.Store.Search(ctx, query, limit)
	if out == nil {
		out = []store.SearchHit{}
	}
	return out, err
}

// ExportSession exports session id as format ExportMarkdown (times in the local time
// zone) or ExportJSON (the versioned document ImportSession reads). Errors:
// store.ErrNotFound; store.ErrInvalid for an unknown format.
func (area *ChatsArea) ExportSession(ctx context.Context, id, format string) (ExportFile, error) {
	s := area.s
	format = strings.ToLower(strings.TrimSpace(format))
	if format != ExportMarkdown && format != ExportJSON && format != "md" {
		return ExportFile{}, fmt.Errorf("unknown export format %q (want markdown or json): %w", format, store.ErrInvalid)
	}
	doc, err := s.Store.ExportSession(ctx, id, s.Version)
	if err != nil {
		return ExportFile{}, err
	}
	base := fileName(doc.Session.Title)
	if format == ExportJSON {
		// The attachments travel with their bytes, so the file is complete on its own.
		for i := range doc.Messages {
			for j := range doc.Messages[i].Attachments {
				a := &doc.Messages[i].Attachments[j]
				data, err := s.Attachments.Read(a.SHA256, -1)
				if err != nil {
					return ExportFile{}, &attachments.AttachmentError{Name: a.Name, Problem: fmt.Sprintf(
						"the attached file %s is missing from the data folder (%v): the export would be incomplete", a.Name, err)}
				}
				a.Data = data
			}
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return ExportFile{}, err
		}
		return ExportFile{Name: base + ".talaria.json", MIMEType: "application/json", Content: string(b) + "\n"}, nil
	}
	return ExportFile{Name: base + ".md", MIMEType: "text/markdown", Content: doc.Markdown(time.Local)}, nil
}

// fileName makes a title safe as a file name on every platform.
func fileName(title string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(title) {
		switch {
		case strings.ContainsRune(`<>:"/\|?*`, r), unicode.IsControl(r):
			b.WriteRune('-')
		default:
			b.WriteRune(r)
		}
	}
	name := strings.Trim(strings.Join(strings.Fields(b.String()), " "), ". -")
	if r := []rune(name); len(r) > 80 {
		name = strings.TrimSpace(string(r[:80]))
	}
	if name == "" {
		name = "conversation"
	}
	return name
}

// ImportSession stores a JSON export (see store.ImportSession) as a new session.
// Errors: *store.ImportError (errors.Is store.ErrInvalid) says what is wrong with the
// file.
func (area *ChatsArea) ImportSession(ctx context.Context, data []byte) (store.Session, error) {
	s := area.s
	if err := s.importBlobs(data); err != nil {
		return store.Session{}, err
	}
	sess, err := s.Store.ImportSession(ctx, data)
	if err == nil {
		s.core.SessionsChanged()
	}
	return sess, err
}

// RecoveryReport returns the report of the last start-up recovery until the user
// dismisses it; the zero report (Recovered false) when there is none.
func (area *ChatsArea) RecoveryReport(ctx context.Context) (store.RecoveryReport, error) {
	s := area.s
	rep, _, err := s.Store.RecoveryReport(ctx)
	return rep, err
}

// DismissRecoveryReport forgets the recovery report (the damaged copy stays on disk).
func (area *ChatsArea) DismissRecoveryReport(ctx context.Context) error {
	s := area.s
	return s.Store.DismissRecoveryReport(ctx)
}

// MaxTitleRunes is the longest session title a user may set, in characters.
const MaxTitleRunes = 200

// checkStore is the start-up check of the database at path, run before store.Open:
// PRAGMA quick_check, and on damage a copy of the file and a recovery into a fresh
// one (store.CheckAndRecover). What it did is logged; a recovery report is kept in the
// database for the window (RecoveryReport). When the check cannot run, the error is
// logged and store.Open reports the problem.
func checkStore(ctx context.Context, path string, log *slog.Logger) {
	start := time.Now()
	rep, err := store.CheckAndRecover(ctx, path)
	switch {
	case err != nil:
		log.Error("start-up database check failed", "path", path, "err", err)
	case rep.Recovered:
		log.Warn("database was damaged and has been recovered", "path", path, "backup", rep.BackupPath,
			"sessions", rep.Sessions, "messages", rep.Messages, "problems", rep.Problems)
	default:
		log.Info("database check ok", "path", path, "ms", time.Since(start).Milliseconds())
	}
	if errors.Is(err, store.ErrCorrupt) {
		log.Error("the database is damaged and could not be recovered; Talaria will report it when it opens the file")
	}
}

// importBlobs stores the bytes of every attachment of an export document, each checked
// against its digest, before the rows are imported. Errors: *store.ImportError naming
// the attachment whose bytes are missing or do not match. A document the store will
// refuse anyway (not JSON, another format) passes through here untouched.
func (s *Service) importBlobs(data []byte) error {
	var doc struct {
		Messages []struct {
			Attachments []struct {
				SHA256 string `json:"sha256"`
				Data   []byte `json:"data"`
			} `json:"attachments"`
		} `json:"messages"`
	}
	if len(data) > store.MaxImportBytes || json.Unmarshal(data, &doc) != nil {
		return nil
	}
	for i, m := range doc.Messages {
		for j, a := range m.Attachments {
			field := fmt.Sprintf("messages[%d].attachments[%d]", i, j)
			if len(a.SHA256) != 64 {
				continue // the store reports the bad digest
			}
			if a.Data == nil {
				if s.Attachments.Has(a.SHA256) {
					continue // the same file is already here
				}
				return &store.ImportError{Field: field + ".data", Problem: "the file's bytes are missing"}
			}
			sum := sha256.Sum256(a.Data)
			if hex.EncodeToString(sum[:]) != a.SHA256 {
				return &store.ImportError{Field: field + ".data", Problem: "the file's bytes do not match its sha256"}
			}
			if _, err := s.Attachments.Put(a.Data); err != nil {
				return fmt.Errorf("storing an attachment of the import failed: %w; check that the disk is not full", err)
			}
		}
	}
	return nil
}
