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

	"talaria/app/hotkey"
	"talaria/backend"
	"talaria/backend/attachments"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// Turns is bound to the window: what makes and steers a turn. Sending (with staged
// attachments), stopping, catching up on a stream's frames, retry and edit, compacting,
// the chat's figures, steering a running turn, and quick ask.
type Turns struct{ app *App }

// StartTurn sends text to the agent in session sessionID; it returns the new stream.
func (ts *Turns) StartTurn(sessionID, text string) (turn.Started, error) {
	st, err := ts.app.service().Turns().StartTurn(ts.app.bg(), sessionID, strings.TrimRight(text, " \t\r\n"))
	return lists(st), userError(err)
}

// Cancel stops the turn of streamID (no-op when it already ended).
func (ts *Turns) Cancel(streamID string) error {
	return userError(ts.app.service().Turns().Cancel(streamID))
}

// StreamSince returns the frames of streamID after seq (for catching up).
func (ts *Turns) StreamSince(streamID string, seq int64) ([]turn.Frame, error) {
	f, err := ts.app.service().Turns().StreamSince(ts.app.bg(), streamID, seq)
	return lists(f), userError(err)
}

// SendMessage sends text with the listed files staged in the chat's composer.
func (ts *Turns) SendMessage(sessionID, text string, attachmentIDs []string) (turn.Started, error) {
	st, err := ts.app.service().Turns().Send(ts.app.bg(), sessionID, strings.TrimRight(text, " \t\r\n"), attachmentIDs)
	return lists(st), chatError(err)
}

// AttachFile stages a file the user dropped or pasted: name is its file name and
// dataBase64 its bytes, base64 (standard encoding).
func (ts *Turns) AttachFile(sessionID, name, dataBase64 string) (store.Attachment, error) {
	if len(dataBase64) > base64.StdEncoding.EncodedLen(attachments.MaxAttachmentBytes)+4 {
		return store.Attachment{}, invalid(fmt.Sprintf("%s is larger than the %d MB Talaria attaches", filepath.Base(name), attachments.MaxAttachmentBytes>>20))
	}
	data, err := base64.StdEncoding.DecodeString(dataBase64)
	if err != nil {
		return store.Attachment{}, fileError("%s could not be read by the window: try attaching it again", filepath.Base(name))
	}
	att, err := ts.app.service().Attachments.AttachFile(ts.app.bg(), sessionID, name, data)
	return lists(att), chatError(err)
}

// PickAttachments opens the system's file dialog and stages the files the user chose.
// Files that cannot be attached are left out; the error then names them (the others
// are staged).
func (ts *Turns) PickAttachments(sessionID string) ([]store.Attachment, error) {
	paths, err := runtime.OpenMultipleFilesDialog(ts.app.ctx, runtime.OpenDialogOptions{Title: "Attach files"})
	if err != nil {
		return nil, fileError("the file dialog failed: %w", err)
	}
	out := []store.Attachment{}
	var problems []string
	for _, p := range paths {
		data, err := readPicked(p)
		if err == nil {
			var att store.Attachment
			if att, err = ts.app.service().Attachments.AttachFile(ts.app.bg(), sessionID, filepath.Base(p), data); err == nil {
				out = append(out, att)
				continue
			}
		}
		problems = append(problems, chatError(err).Error())
	}
	if len(problems) > 0 {
		return out, fileError("%s", strings.Join(problems, "; "))
	}
	return lists(out), nil
}

// StagedAttachments lists the files waiting in a chat's composer.
func (ts *Turns) StagedAttachments(sessionID string) ([]store.Attachment, error) {
	out, err := ts.app.service().Attachments.StagedAttachments(ts.app.bg(), sessionID)
	return lists(out), chatError(err)
}

// RemoveAttachment takes a staged file out of a chat's composer.
func (ts *Turns) RemoveAttachment(sessionID, id string) error {
	err := ts.app.service().Attachments.RemoveAttachment(ts.app.bg(), sessionID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil // already gone: what the user wanted
	}
	return chatError(err)
}

// AttachmentPreview returns an attachment's image (a data: URL) or the start of its text.
func (ts *Turns) AttachmentPreview(sessionID, id string) (attachments.AttachmentContent, error) {
	out, err := ts.app.service().Attachments.AttachmentPreview(ts.app.bg(), sessionID, id)
	return lists(out), chatError(err)
}

// Retry answers the chat's last message again, with model ("" the chat's own).
func (ts *Turns) Retry(sessionID, model string) (backend.Branched, error) {
	out, err := ts.app.service().Turns().Retry(ts.app.bg(), sessionID, model)
	return lists(out), chatError(err)
}

// EditAndResend replaces a message of the user with text and sends it again.
func (ts *Turns) EditAndResend(sessionID string, messageID int64, text string, revision int64) (backend.Branched, error) {
	out, err := ts.app.service().Turns().EditAndResend(ts.app.bg(), sessionID, messageID, strings.TrimRight(text, " \t\r\n"), revision)
	return lists(out), chatError(err)
}

// CompactSession summarises the chat's older messages now; with retry, a last turn
// that failed is then answered again.
func (ts *Turns) CompactSession(sessionID string, retry bool) (backend.CompactResult, error) {
	out, err := ts.app.service().Turns().Compact(ts.app.bg(), sessionID, retry)
	return lists(out), chatError(err)
}

// RegenerateTitle asks the chat's model for a new title.
func (ts *Turns) RegenerateTitle(sessionID string) (string, error) {
	out, err := ts.app.service().Turns().RegenerateTitle(ts.app.bg(), sessionID)
	return out, chatError(err)
}

// ChatFigures returns a chat's cost and context meter and the figures of the turns of
// streamIDs (null: every turn).
func (ts *Turns) ChatFigures(sessionID string, streamIDs []string) (backend.ChatFigures, error) {
	out, err := ts.app.service().Turns().ChatFigures(ts.app.bg(), sessionID, streamIDs)
	return lists(out), chatError(err)
}

// QuickAsk switches the window into quick-ask mode (the tray, the shortcut and a
// second launch with --quick-ask call it). Already in it, the window is brought to the
// front.
func (ts *Turns) QuickAsk() {
	if ts.app.ctx == nil {
		ts.app.queueLaunchAction(LaunchQuickAsk)
		return
	}
	q := &ts.app.quick
	q.mu.Lock()
	if !q.active {
		q.active = true
		ts.app.life.mu.Lock()
		q.wasHidden = ts.app.life.hidden
		ts.app.life.mu.Unlock()
		q.maximised = runtime.WindowIsMaximised(ts.app.ctx)
		if q.maximised {
			runtime.WindowUnmaximise(ts.app.ctx)
		}
		q.w, q.h = runtime.WindowGetSize(ts.app.ctx)
		q.x, q.y = runtime.WindowGetPosition(ts.app.ctx)
		runtime.WindowSetMinSize(ts.app.ctx, quickAskMinW, quickAskMinH)
		runtime.WindowSetSize(ts.app.ctx, quickAskWidth, quickAskHeight)
		runtime.WindowCenter(ts.app.ctx)
		runtime.WindowSetAlwaysOnTop(ts.app.ctx, true)
	}
	q.mu.Unlock()
	ts.app.service().Log.Info("quick ask opened")
	ts.app.queueLaunchAction(LaunchQuickAsk)
	ts.app.focusWindow()
}

// LeaveQuickAsk puts the window back as it was before quick ask. With openMain the
// window stays shown (the window then opens the chat: "Open in Talaria"); without it a
// window that was hidden in the tray before is hidden again. Outside quick ask it does
// nothing.
func (ts *Turns) LeaveQuickAsk(openMain bool) {
	q := &ts.app.quick
	q.mu.Lock()
	if !q.active || ts.app.ctx == nil {
		q.mu.Unlock()
		return
	}
	q.active = false
	runtime.WindowSetAlwaysOnTop(ts.app.ctx, false)
	runtime.WindowSetMinSize(ts.app.ctx, mainMinW, mainMinH)
	if q.w > 0 && q.h > 0 {
		runtime.WindowSetSize(ts.app.ctx, max(q.w, mainMinW), max(q.h, mainMinH))
		runtime.WindowSetPosition(ts.app.ctx, q.x, q.y)
	}
	if q.maximised {
		runtime.WindowMaximise(ts.app.ctx)
	}
	hide := q.wasHidden && !openMain
	q.mu.Unlock()
	if hide {
		ts.app.life.mu.Lock()
		ts.app.life.hidden = true
		ts.app.life.mu.Unlock()
		runtime.WindowHide(ts.app.ctx)
	} else {
		ts.app.focusWindow()
	}
	ts.app.service().Log.Info("quick ask closed", "open_main", openMain)
}

// QuickAskStatus reports quick ask's state and its shortcut.
func (ts *Turns) QuickAskStatus() QuickAskStatus {
	q := &ts.app.quick
	q.mu.Lock()
	defer q.mu.Unlock()
	return QuickAskStatus{Active: q.active, Shortcut: q.shortcut, ShortcutActive: q.stopShortcut != nil,
		ShortcutError: q.shortcutErr, Command: "talaria --quick-ask"}
}

// SetQuickAskShortcut sets quick ask's global shortcut ("" turns it off) and takes it
// at once. The setting is kept even when the shortcut cannot be taken now (the status
// says why). Errors: a shortcut that cannot be read (nothing is changed then).
func (ts *Turns) SetQuickAskShortcut(text string) (QuickAskStatus, error) {
	text = strings.TrimSpace(text)
	if text != "" {
		s, err := hotkey.Parse(text)
		if err != nil {
			return ts.QuickAskStatus(), err
		}
		text = s.String()
	}
	value := text
	if value == "" {
		value = "off"
	}
	if err := ts.app.service().Store.SetSetting(ts.app.bg(), keyQuickAskShortcut, value); err != nil {
		return ts.QuickAskStatus(), userError(err)
	}
	ts.app.takeShortcut(text)
	return ts.QuickAskStatus(), nil
}

// Steer sends text into the session's running turn, or starts a turn when none runs.
func (ts *Turns) Steer(sessionID, text string) (turn.SteerOutcome, error) {
	o, err := ts.app.service().Turns().Steer(ts.app.bg(), sessionID, text)
	return lists(o), userError(err)
}

// WithdrawSteer takes a queued message back (Edit, Cancel) and returns its text.
func (ts *Turns) WithdrawSteer(sessionID, steerID string) (string, error) {
	t, err := ts.app.service().Turns().WithdrawSteer(ts.app.bg(), sessionID, steerID)
	return t, userError(err)
}

// SteerNow asks the agent to read a queued message at once.
func (ts *Turns) SteerNow(sessionID, steerID string) (protocol.SteerNowResult, error) {
	r, err := ts.app.service().Turns().SteerNow(ts.app.bg(), sessionID, steerID)
	return r, userError(err)
}

// PendingSteers lists the messages queued for the session's running turn.
func (ts *Turns) PendingSteers(sessionID string) []turn.SteerInfo {
	return lists(ts.app.service().Turns().PendingSteers(sessionID))
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
