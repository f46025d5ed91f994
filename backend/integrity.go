package backend

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"talaria/backend/bus"
	"talaria/backend/core"
	"talaria/backend/store"
)

// The database's integrity check is off the start-up path: the window opens on the
// database at once, and the whole-file check (PRAGMA quick_check: about 2 s on a million
// messages) runs in the background a few seconds after start, and only when it is due:
// after an unclean shutdown (the app or the machine died with the file open), or when the
// last passing check is older than IntegrityCheckEvery. Damage found then is handled as
// the start-up check handled it: the damaged file is kept beside it, what can be read is
// recovered into a fresh file under the open store, and the window shows the recovery
// report (event EventDatabase). A file that cannot be opened at all is still checked and
// recovered before the window opens.

// IntegrityCheckEvery is how old the last passing integrity check may be before a start
// runs another one (after a clean shutdown).
const IntegrityCheckEvery = 7 * 24 * time.Hour

// IntegrityCheckDelay is how long after start the background check waits (the window
// is loading meanwhile).
const IntegrityCheckDelay = 3 * time.Second

// EventDatabase tells the window about the background integrity check: payload
// DatabaseEvent, when it found damage ("recovering") and when it is done ("recovered",
// with the report; or "failed").
const EventDatabase = "database"

// DatabaseEvent is EventDatabase's payload.
type DatabaseEvent struct {
	State   string                `json:"state"` // recovering, recovered, failed
	Report  *store.RecoveryReport `json:"report,omitempty"`
	Message string                `json:"message,omitempty"`
	Hint    string                `json:"hint,omitempty"`
}

// runningMarker is the file that exists while a Talaria has the data folder's database
// open; finding it at start means the last run did not shut down cleanly.
func runningMarker(p core.Paths) string { return filepath.Join(p.DataDir, "talaria.running") }

// openStore opens the database without a whole-file check; a file that cannot be opened
// as it is (damaged, not a database) gets the start-up check and recovery first, as
// before. It reports whether the last run left the database open (unclean shutdown).
func openStore(ctx context.Context, paths core.Paths, log *slog.Logger, checkFirst func()) (*store.Store, bool, error) {
	marker := runningMarker(paths)
	_, statErr := os.Stat(marker)
	unclean := statErr == nil
	st, err := store.Open(ctx, paths.DBPath)
	if err != nil && errors.Is(err, store.ErrCorrupt) {
		log.Warn("the database cannot be opened as it is; checking and recovering it", "err", err)
		checkFirst()
		st, err = store.Open(ctx, paths.DBPath)
	}
	if err != nil {
		return nil, unclean, err
	}
	if err := os.WriteFile(marker, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		log.Warn("cannot write the running marker (an unclean shutdown will not be noticed)", "path", marker, "err", err)
	}
	return st, unclean, nil
}

// integrityDue decides whether this start runs the background check.
func (s *Service) integrityDue(ctx context.Context, unclean bool) bool {
	if unclean {
		return true
	}
	at, err := s.Store.IntegrityCheckedAt(ctx)
	return err != nil || at == 0 || time.Since(time.UnixMilli(at)) > IntegrityCheckEvery
}

// checkIntegrity is the background check (see the top of this file); it returns when
// the check and any recovery are done, or ctx ends.
func (s *Service) checkIntegrity(ctx context.Context) {
	start := time.Now()
	problems, err := s.Store.CheckIntegrity(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Error("background database check failed", "err", err)
		}
		return
	}
	if len(problems) == 0 {
		if err := s.Store.SetIntegrityCheckedAt(ctx, time.Now().UnixMilli()); err != nil {
			s.Log.Warn("recording the database check", "err", err)
		}
		s.Log.Info("database check ok", "ms", time.Since(start).Milliseconds())
		return
	}
	s.Log.Warn("the database is damaged; recovering it", "problems", problems)
	s.Bus.Publish(bus.Event{Name: EventDatabase, Payload: DatabaseEvent{State: "recovering",
		Message: "The database file is damaged. Talaria is recovering what it can read; a copy of the damaged file is kept."}})
	rep, err := s.Store.Recover(ctx, problems)
	if err != nil {
		s.Log.Error("database recovery failed", "err", err)
		s.Bus.Publish(bus.Event{Name: EventDatabase, Payload: DatabaseEvent{State: "failed",
			Message: "The database file is damaged and could not be recovered: " + err.Error(),
			Hint:    "Quit Talaria, move " + s.Paths.DBPath + " aside and start Talaria again; the copy keeps what it held."}})
		return
	}
	s.Log.Warn("database was damaged and has been recovered", "backup", rep.BackupPath,
		"sessions", rep.Sessions, "messages", rep.Messages, "problems", rep.Problems)
	s.Bus.Publish(bus.Event{Name: EventDatabase, Payload: DatabaseEvent{State: "recovered", Report: &rep, Message: rep.Message}})
	s.core.SessionsChanged()
}

// startIntegrityCheck runs checkIntegrity after delay in its own goroutine when it is
// due; Close stops it.
func (s *Service) startIntegrityCheck(delay time.Duration) {
	if !s.checkDue {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.checkStop = func() {
		cancel()
		<-done
	}
	go func() {
		defer close(done)
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
			s.checkIntegrity(ctx)
		case <-ctx.Done():
		}
	}()
}
