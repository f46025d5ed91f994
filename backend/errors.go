package backend

import (
	"context"
	"errors"

	"talaria/backend/attachments"
	"talaria/backend/core"
	"talaria/backend/pending"
	"talaria/backend/remote"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/tasks"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/sidecar/protocol"
)

// ErrorCode is the stable code of a failed bound method: the window decides what to do
// on it (never on the message, which is for the user and may change). Every code is
// generated for the window (ERROR_CODE_VALUES in protocol.gen.ts), whose handling table
// (frontend/src/lib/errors.ts) must name each one.
type ErrorCode string

// Error codes. Add one here (with a case in ErrorOf when a typed error maps to it) and
// its handling in frontend/src/lib/errors.ts; `make bindings` generates the rest.
const (
	// CodeInvalid: the input was refused (Field names it when known); fix and retry.
	CodeInvalid ErrorCode = "invalid"
	// CodeNotFound: the session, task or item named no longer exists.
	CodeNotFound ErrorCode = "not_found"
	// CodeBusy: the chat is running a turn; wait for it or press Stop (a message sent
	// meanwhile becomes a steer).
	CodeBusy ErrorCode = "busy"
	// CodeStale: the card answered is no longer waiting (answered elsewhere, timed out,
	// withdrawn); drop it and re-read the queue.
	CodeStale ErrorCode = "stale"
	// CodeConflict: the data changed since it was read, or the request was already
	// used; re-read and retry.
	CodeConflict ErrorCode = "conflict"
	// CodeSteerGone: the queued message is no longer queued (the agent read it, or it
	// was withdrawn or sent); re-read the queue.
	CodeSteerGone ErrorCode = "steer_gone"
	// CodeSteerInFlight: the queued message has not reached the agent yet; retry in a
	// moment.
	CodeSteerInFlight ErrorCode = "steer_in_flight"
	// CodeNotDelivered: an answer to an approval, clarify or vault card did not reach
	// the agent; the card is still waiting: answer it again.
	CodeNotDelivered ErrorCode = "not_delivered"
	// CodeNotConfigured: no provider or model is set; open Settings.
	CodeNotConfigured ErrorCode = "not_configured"
	// CodeKeyringUnavailable: the system keychain cannot be used; what was asked was
	// done for this run only (the message says what).
	CodeKeyringUnavailable ErrorCode = "keyring_unavailable"
	// CodeAgentUnavailable: the chat's agent process or runtime is not running (or
	// cannot be started); it is restarted by itself, or the hint says what to install.
	CodeAgentUnavailable ErrorCode = "agent_unavailable"
	// CodeAgentError: the agent or the provider refused or failed the request.
	CodeAgentError ErrorCode = "agent_error"
	// CodeUnsupported: this chat's runtime or model cannot do that.
	CodeUnsupported ErrorCode = "unsupported"
	// CodeNothingToDo: there was nothing to do (e.g. nothing to summarise yet).
	CodeNothingToDo ErrorCode = "nothing_to_do"
	// CodeStorage: the database cannot be written or read (disk full, read-only,
	// locked, damaged, too new); the message says what to do.
	CodeStorage ErrorCode = "storage"
	// CodeFile: a file the user chose could not be read or written.
	CodeFile ErrorCode = "file"
	// CodeNotReady: the window is still starting; retry.
	CodeNotReady ErrorCode = "not_ready"
	// CodeClosing: Talaria is quitting.
	CodeClosing ErrorCode = "closing"
	// CodeTimeout: the operation took too long.
	CodeTimeout ErrorCode = "timeout"
	// CodeCancelled: the operation was cancelled.
	CodeCancelled ErrorCode = "cancelled"
	// CodeInternal: anything else (a defect); the logs folder has details.
	CodeInternal ErrorCode = "internal"
)

// UserError is what every bound method rejects with (app sets it as Wails' error
// formatter): a stable Code the window decides on, a Message for the user, a Hint
// saying what to do ("" when the message says it), and for invalid input the Field
// that was refused ("" when not one field).
type UserError struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
	Hint    string    `json:"hint"`
	Field   string    `json:"field,omitempty"`
	err     error
}

func (e *UserError) Error() string { return e.Message }

// Unwrap returns the error it was made from, if any.
func (e *UserError) Unwrap() error { return e.err }

// NewUserError makes a UserError with a message and a hint.
func NewUserError(code ErrorCode, message, hint string) *UserError {
	return &UserError{Code: code, Message: message, Hint: hint}
}

// WithCause returns e remembering the error it stands for (errors.Is/As reach it).
func (e *UserError) WithCause(err error) *UserError {
	c := *e
	c.err = err
	return &c
}

// ErrorOf classifies err for the window: a *UserError in the chain is returned as is;
// the backend's typed errors and sentinels get their code (and a hint where the
// message does not say what to do); anything else is CodeInternal with err's message.
// ErrorOf(nil) is nil.
func ErrorOf(err error) *UserError {
	if err == nil {
		return nil
	}
	var ue *UserError
	if errors.As(err, &ue) {
		return ue
	}
	mk := func(code ErrorCode, hint string) *UserError {
		return &UserError{Code: code, Message: err.Error(), Hint: hint, err: err}
	}
	field := func(code ErrorCode, f string) *UserError {
		u := mk(code, "")
		u.Field = f
		return u
	}
	var (
		busy     *store.BusyError
		stale    *pending.StaleError
		notConf  *turn.NotConfiguredError
		keyring  *vault.UnavailableError
		runtime  *core.RuntimeUnavailableError
		settings *SaveSettingsError
		chatOpts *ChatOptionsError
		acpAgent *ACPAgentError
		mcpSet   *MCPSettingsError
		mcpAuth  *MCPAuthError
		mcpConf  *protocol.MCPConfigError
		space    *WorkspaceError
		sandbox  *SandboxError
		attach   *attachments.AttachmentError
		answer   *InvalidAnswerError
		imp      *store.ImportError
		images   *turn.ImagesRefusedError
		titles   *turn.TitlesUnsupportedError
		compactU *turn.CompactUnsupportedError
		nothing  *turn.NothingToCompactError
		notACP   *NotACPError
		tooNew   *store.TooNewError
		perr     *protocol.Error
		undeliv  *UndeliveredAnswerError
		rhost    *remote.Error
		rfield   *remote.FieldError
		tooLong  *turn.MessageTooLongError
	)
	switch {
	case errors.As(err, &undeliv):
		// Before the conditions of the sidecar error it wraps: the card is still waiting.
		return mk(CodeNotDelivered, "")
	case errors.As(err, &busy):
		return mk(CodeBusy, "Wait for it to finish or press Stop.")
	case errors.As(err, &stale), errors.Is(err, pending.ErrStale), errors.Is(err, store.ErrStreamEnded):
		return mk(CodeStale, "")
	case errors.Is(err, store.ErrNotFound):
		return mk(CodeNotFound, "")
	case errors.Is(err, turn.ErrSteerTaken), errors.Is(err, turn.ErrNoSuchSteer):
		return mk(CodeSteerGone, "")
	case errors.Is(err, turn.ErrSteerNotYetQueued):
		return mk(CodeSteerInFlight, "")
	case errors.As(err, &notConf):
		return mk(CodeNotConfigured, "Open Settings and choose a provider and a model.")
	case errors.As(err, &keyring):
		return mk(CodeKeyringUnavailable, "")
	case errors.As(err, &runtime):
		return &UserError{Code: CodeAgentUnavailable, Message: runtime.Message, Hint: runtime.Hint, err: err}
	case errors.As(err, &settings):
		return field(CodeInvalid, settings.Field)
	case errors.As(err, &chatOpts):
		return field(CodeInvalid, chatOpts.Field)
	case errors.As(err, &acpAgent):
		return field(CodeInvalid, acpAgent.Field)
	case errors.As(err, &rfield):
		return field(CodeInvalid, rfield.Field)
	case errors.As(err, &rhost):
		return mk(CodeAgentUnavailable, rhost.Hint())
	case errors.As(err, &mcpSet):
		return field(CodeInvalid, mcpSet.Field)
	case errors.As(err, &mcpAuth):
		return mk(CodeUnsupported, "")
	case errors.As(err, &mcpConf):
		return field(CodeInvalid, mcpConf.Field)
	case errors.As(err, &space), errors.As(err, &sandbox), errors.As(err, &attach), errors.As(err, &answer),
		errors.As(err, &imp), errors.As(err, &tooLong), errors.Is(err, turn.ErrEmptyMessage):
		return mk(CodeInvalid, "")
	case errors.As(err, &images), errors.As(err, &titles), errors.As(err, &compactU), errors.As(err, &notACP),
		errors.Is(err, ErrCompactUnsupported):
		return mk(CodeUnsupported, "")
	case errors.As(err, &nothing):
		return mk(CodeNothingToDo, "")
	case errors.Is(err, store.ErrConflict):
		return mk(CodeConflict, "Look at it again and retry.")
	case errors.Is(err, store.ErrInvalid):
		return mk(CodeInvalid, "")
	case errors.As(err, &tooNew), errors.Is(err, store.ErrReadOnly), errors.Is(err, store.ErrDiskFull),
		errors.Is(err, store.ErrLocked), errors.Is(err, store.ErrCorrupt):
		return mk(CodeStorage, "")
	case errors.Is(err, tasks.ErrClosing):
		return mk(CodeClosing, "")
	case errors.Is(err, context.DeadlineExceeded):
		return mk(CodeTimeout, "Try again; if it repeats, Restart agent (status bar) and check the logs folder.")
	case errors.Is(err, context.Canceled):
		return mk(CodeCancelled, "")
	case errors.Is(err, supervisor.ErrUnavailable):
		return mk(CodeAgentUnavailable, "Talaria restarts the agent by itself: try again in a moment, or use Restart agent.")
	case errors.As(err, &perr):
		switch perr.Condition() {
		case protocol.CondSidecarUnavailable, protocol.CondAgentUnavailable, protocol.CondLocalRuntimeUnavailable:
			if perr.Data != nil && perr.Data.Hint != "" {
				return mk(CodeAgentUnavailable, perr.Data.Hint)
			}
			return mk(CodeAgentUnavailable, "Talaria restarts the agent by itself: try again in a moment, or use Restart agent.")
		case protocol.CondInvalidParams:
			return mk(CodeInvalid, "")
		case protocol.CondCancelled:
			return mk(CodeCancelled, "")
		case protocol.CondMethodNotFound, protocol.CondAgentIncompatible:
			return mk(CodeUnsupported, "")
		}
		return mk(CodeAgentError, "")
	}
	return mk(CodeInternal, "If it repeats, the logs folder (Settings) has details.")
}
