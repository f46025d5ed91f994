package store

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// Sentinel errors. Every error the store returns wraps at most one of them; test with
// errors.Is. The messages say what the user can do, so the app may show them as they are.
var (
	// ErrNotFound: the session does not exist or was deleted (a tombstone).
	ErrNotFound = errors.New("session not found (it may have been deleted)")

	// ErrReadOnly: the database file or its folder cannot be written (permissions, a
	// read-only disk or mount, SQLITE_READONLY).
	ErrReadOnly = errors.New("the Talaria database or its folder is read-only: " +
		"make the data folder writable (check its permissions, and that the disk is not mounted read-only), then restart Talaria")

	// ErrDiskFull: the disk holding the database is full (SQLITE_FULL, ENOSPC).
	ErrDiskFull = errors.New("the disk holding the Talaria database is full: free some disk space and try again")

	// ErrLocked: another process held the database lock for longer than the busy
	// timeout (SQLITE_BUSY or SQLITE_LOCKED after Options.BusyTimeout, 5 s by default).
	ErrLocked = errors.New("the Talaria database is locked by another program: " +
		"close other copies of Talaria and any tool that has the database open, then try again")

	// ErrCorrupt: the file is damaged or is not an SQLite database (SQLITE_CORRUPT,
	// SQLITE_NOTADB).
	ErrCorrupt = errors.New("the Talaria database file is damaged or is not a Talaria database: " +
		"move it aside to start with an empty history, or restore it from a backup")

	// ErrInvalid: an argument was rejected before anything was written (an empty id, an
	// unknown message kind or terminal, a frame whose data is not JSON).
	ErrInvalid = errors.New("invalid argument")

	// ErrConflict: the row already exists (a stream id admitted twice, a journal frame
	// (stream id, seq) written twice, a fork request key reused for another fork), or a
	// save was based on a stale read (then the error is a *ConflictError).
	ErrConflict = errors.New("already exists")

	// ErrStreamEnded: SettleTurn was called for a stream that was already settled;
	// nothing was written, so rows are never appended twice.
	ErrStreamEnded = errors.New("stream already settled")
)

// BusyError is returned by AdmitTurn when the session already has a live stream. The
// caller may wait for StreamID to settle, or cancel it.
type BusyError struct {
	SessionID string
	StreamID  string // the stream that is still running
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("session %s is busy: stream %s is still running; wait for it to finish or stop it first",
		e.SessionID, e.StreamID)
}

// AgentSessionBoundError is returned by SetAgentSessionFromAgent when another live
// chat is already bound to the agent's session: one agent session is continued in one
// chat (two chats would each delete or resume it behind the other's back). Nothing was
// written; the caller opens SessionID instead.
type AgentSessionBoundError struct {
	Runtime        string // the runtime id, e.g. "acp:opencode"
	AgentSessionID string // the agent's own session id
	SessionID      string // the chat already bound to it
}

func (e *AgentSessionBoundError) Error() string {
	return fmt.Sprintf("the agent's session %s (%s) is already open as chat %s: open that chat", e.AgentSessionID, e.Runtime, e.SessionID)
}

// ConflictError is returned by AppendMessages and SpliceMessages when the save was
// based on a stale read: the session's revision moved on since the caller read it.
// Nothing was written. errors.Is(err, ErrConflict) holds.
type ConflictError struct {
	SessionID string
	Have      int64 // the session's revision in the store now
	Want      int64 // the revision the save was based on (the caller's baseRevision)
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("session %s changed since it was read (it is at revision %d, the save was based on %d): "+
		"nothing was saved; reload the session and try again", e.SessionID, e.Have, e.Want)
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// TooNewError is returned by Open when the database was written by a newer Talaria
// (its schema version Have is above Want, the newest this build knows). The file is
// left untouched.
type TooNewError struct {
	Have int // schema version found in the file
	Want int // newest schema version this build supports (SchemaVersion)
	// AppVersion is the Talaria version that last wrote the file, "" when unknown.
	AppVersion string
}

func (e *TooNewError) Error() string {
	by := ""
	if e.AppVersion != "" {
		by = " (last written by Talaria " + e.AppVersion + ")"
	}
	return fmt.Sprintf("the Talaria database has schema version %d%s but this Talaria supports only up to version %d: "+
		"update Talaria to open it; the file was not changed", e.Have, by, e.Want)
}

// classify maps a driver or OS error to one of the sentinels, keeping the original in
// the chain (errors.As still finds the sqlite3.Error). Errors it does not recognise,
// and the store's own errors, are returned unchanged.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if c, ok := classifySQLite(err); ok {
		return c
	}
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("%w (%w)", ErrDiskFull, err)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return fmt.Errorf("%w (%w)", ErrReadOnly, err)
	}
	return err
}

// wrap prefixes err with the operation and classifies it.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: %s: %w", op, classify(err))
}
