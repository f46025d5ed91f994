package app

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/backend"
	"talaria/backend/attachments"
	"talaria/backend/store"
	"talaria/backend/turn"
)

// The chat a desktop user expects: messages with files, retry and edit, "Summarise and
// continue", a regenerated title, figures (cost, context) and each chat's settings.
// The window hands over the bytes of files the user dropped or pasted; the file picker
// is a native dialog opened here, so the window never names a path to read.

// SendMessage sends text with the listed files staged in the chat's composer.
func (a *App) SendMessage(sessionID, text string, attachmentIDs []string) (turn.Started, error) {
	st, err := a.service().Send(a.bg(), sessionID, strings.TrimRight(text, " \t\r\n"), attachmentIDs)
	return st, chatError(err)
}

// AttachFile stages a file the user dropped or pasted: name is its file name and
// dataBase64 its bytes, base64 (standard encoding).
func (a *App) AttachFile(sessionID, name, dataBase64 string) (store.Attachment, error) {
	if len(dataBase64) > base64.StdEncoding.EncodedLen(attachments.MaxAttachmentBytes)+4 {
		return store.Attachment{}, invalid(fmt.Sprintf("%s is larger than the %d MB Talaria attaches", filepath.Base(name), attachments.MaxAttachmentBytes>>20))
	}
	data, err := base64.StdEncoding.DecodeString(dataBase64)
	if err != nil {
		return store.Attachment{}, fileError("%s could not be read by the window: try attaching it again", filepath.Base(name))
	}
	att, err := a.service().Attachments.AttachFile(a.bg(), sessionID, name, data)
	return att, chatError(err)
}

// PickAttachments opens the system's file dialog and stages the files the user chose.
// Files that cannot be attached are left out; the error then names them (the others
// are staged).
func (a *App) PickAttachments(sessionID string) ([]store.Attachment, error) {
	paths, err := runtime.OpenMultipleFilesDialog(a.ctx, runtime.OpenDialogOptions{Title: "Attach files"})
	if err != nil {
		return nil, fileError("the file dialog failed: %w", err)
	}
	out := []store.Attachment{}
	var problems []string
	for _, p := range paths {
		data, err := readPicked(p)
		if err == nil {
			var att store.Attachment
			if att, err = a.service().Attachments.AttachFile(a.bg(), sessionID, filepath.Base(p), data); err == nil {
				out = append(out, att)
				continue
			}
		}
		problems = append(problems, chatError(err).Error())
	}
	if len(problems) > 0 {
		return out, fileError("%s", strings.Join(problems, "; "))
	}
	return out, nil
}

// readPicked reads a file the user picked in the dialog: a regular file of at most
// attachments.MaxAttachmentBytes.
func readPicked(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileError("%s could not be opened: %w", filepath.Base(path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fileError("%s is not a regular file", filepath.Base(path))
	}
	data, err := io.ReadAll(io.LimitReader(f, attachments.MaxAttachmentBytes+1))
	if err != nil {
		return nil, fileError("%s could not be read: %w", filepath.Base(path), err)
	}
	return data, nil
}

// StagedAttachments lists the files waiting in a chat's composer.
func (a *App) StagedAttachments(sessionID string) ([]store.Attachment, error) {
	out, err := a.service().Attachments.StagedAttachments(a.bg(), sessionID)
	if out == nil {
		out = []store.Attachment{}
	}
	return out, chatError(err)
}

// RemoveAttachment takes a staged file out of a chat's composer.
func (a *App) RemoveAttachment(sessionID, id string) error {
	err := a.service().Attachments.RemoveAttachment(a.bg(), sessionID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil // already gone: what the user wanted
	}
	return chatError(err)
}

// AttachmentPreview returns an attachment's image (a data: URL) or the start of its text.
func (a *App) AttachmentPreview(sessionID, id string) (attachments.AttachmentContent, error) {
	out, err := a.service().Attachments.AttachmentPreview(a.bg(), sessionID, id)
	return out, chatError(err)
}

// Retry answers the chat's last message again, with model ("" the chat's own).
func (a *App) Retry(sessionID, model string) (backend.Branched, error) {
	out, err := a.service().Retry(a.bg(), sessionID, model)
	return out, chatError(err)
}

// EditAndResend replaces a message of the user with text and sends it again.
func (a *App) EditAndResend(sessionID string, messageID int64, text string, revision int64) (backend.Branched, error) {
	out, err := a.service().EditAndResend(a.bg(), sessionID, messageID, strings.TrimRight(text, " \t\r\n"), revision)
	return out, chatError(err)
}

// CompactSession summarises the chat's older messages now; with retry, a last turn
// that failed is then answered again.
func (a *App) CompactSession(sessionID string, retry bool) (backend.CompactResult, error) {
	out, err := a.service().Compact(a.bg(), sessionID, retry)
	return out, chatError(err)
}

// RegenerateTitle asks the chat's model for a new title.
func (a *App) RegenerateTitle(sessionID string) (string, error) {
	out, err := a.service().RegenerateTitle(a.bg(), sessionID)
	return out, chatError(err)
}

// ChatFigures returns a chat's cost and context meter and the figures of the turns of
// streamIDs (null: every turn).
func (a *App) ChatFigures(sessionID string, streamIDs []string) (backend.ChatFigures, error) {
	out, err := a.service().ChatFigures(a.bg(), sessionID, streamIDs)
	if out.Turns == nil {
		out.Turns = []store.TurnFigures{}
	}
	return out, chatError(err)
}

// GetChatSettings returns what a chat's settings popover shows.
func (a *App) GetChatSettings(sessionID string) (backend.ChatSettings, error) {
	out, err := a.service().GetChatSettings(a.bg(), sessionID)
	return out, chatError(err)
}

// SetChatModel sets a chat's own model ("" follows Settings).
func (a *App) SetChatModel(sessionID, model string) (store.Session, error) {
	out, err := a.service().SetChatModel(a.bg(), sessionID, model)
	return out, chatError(err)
}

// ModelInfo returns what is known of a model of the current provider ("" Settings').
func (a *App) ModelInfo(model string) (backend.ModelInfo, error) {
	out, err := a.service().ModelInfo(a.bg(), model)
	return out, chatError(err)
}

// SetModelSettings stores a model's context window and price as the user set them.
func (a *App) SetModelSettings(model string, ms backend.ModelSettings) (backend.ModelInfo, error) {
	out, err := a.service().SetModelSettings(a.bg(), model, ms)
	return out, chatError(err)
}

// GetChatPreferences returns the chat preferences of Settings (default custom
// instructions, when to summarise, how much of a text file to send).
func (a *App) GetChatPreferences() (backend.ChatPreferences, error) {
	out, err := a.service().GetChatPreferences(a.bg())
	return out, chatError(err)
}

// SaveChatPreferences stores the chat preferences of Settings.
func (a *App) SaveChatPreferences(p backend.ChatPreferences) (backend.ChatPreferences, error) {
	out, err := a.service().SaveChatPreferences(a.bg(), p)
	return out, chatError(err)
}

// chatError says what to do about the errors of these calls.
func chatError(err error) error {
	var conflict *store.ConflictError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &conflict):
		return backend.NewUserError(backend.CodeConflict, "the conversation changed meanwhile: look at it again and retry", "").WithCause(err)
	case errors.Is(err, store.ErrInvalid) && !isUserError(err):
		return backend.NewUserError(backend.CodeInvalid, strings.TrimSuffix(err.Error(), ": "+store.ErrInvalid.Error()), "").WithCause(err)
	}
	return userError(err)
}
