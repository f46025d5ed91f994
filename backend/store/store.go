// Package store is Talaria's session store: sessions, their transcript rows, the run
// journal of every stream, the streams table that survives a crash, and settings, in one
// SQLite file (github.com/mattn/go-sqlite3; build with -tags sqlite_fts5).
//
// One *sql.DB with a single connection owns every write (BEGIN IMMEDIATE, so writers
// queue in Go instead of racing for SQLite's lock); a separate read-only pool serves
// reads, which WAL lets run beside the writer. Times are epoch milliseconds, token
// counters are tokens and costs are US dollars throughout.
//
// Errors are wrapped with %w. Callers decide with errors.Is on ErrNotFound,
// ErrReadOnly, ErrDiskFull, ErrLocked, ErrCorrupt, ErrInvalid, ErrConflict and
// ErrStreamEnded, and with errors.As on *BusyError and *TooNewError.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

const driverName = "sqlite3"

// DefaultBusyTimeout is how long a write waits for a lock held by another process
// before it fails with ErrLocked.
const DefaultBusyTimeout = 5 * time.Second

// readConns bounds the read pool (the machine may have two cores).
const readConns = 4

// Options tune OpenWith. The zero value is what Open uses.
type Options struct {
	// AppVersion is recorded in meta.app_version and named by a TooNewError seen by an
	// older build. "" means the main module's version from the build info, or "dev".
	AppVersion string
	// BusyTimeout is how long a statement waits for another process's lock before
	// ErrLocked. 0 means DefaultBusyTimeout.
	BusyTimeout time.Duration

	// writerReadOnly opens the write connection with mode=ro. Tests use it to get a
	// genuine SQLITE_READONLY where chmod cannot (when they run as root).
	writerReadOnly bool
	// commonMessages replaces CommonMessages in Search (0 keeps it), so tests can make
	// a word common without writing 50,000 messages.
	commonMessages int
}

// Store is an open session store. It is safe for concurrent use.
type Store struct {
	path string
	opts Options
	// mu is held shared by every read and write, and exclusively while Recover swaps
	// the file under the open store.
	mu  sync.RWMutex
	w   *sql.DB // one connection: every write goes through it
	r   *sql.DB // read-only pool
	now func() int64
}

// Open opens or creates the store at path (creating its folder, mode 0700), migrates
// it to SchemaVersion and sets journal_mode=WAL, foreign_keys=ON, busy_timeout=5000 and
// synchronous=NORMAL. Errors: *TooNewError when the file was written by a newer
// Talaria (the file is not modified); ErrReadOnly, ErrDiskFull, ErrLocked or ErrCorrupt
// when the file or folder cannot be used.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("store: open: empty path: %w", ErrInvalid)
	}
	if opts.AppVersion == "" {
		opts.AppVersion = buildVersion()
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	s := &Store{path: path, opts: opts, now: func() int64 { return time.Now().UnixMilli() }}
	if err := s.openHandles(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// openHandles opens the write connection (migrating the file) and the read pool.
func (s *Store) openHandles(ctx context.Context) error {
	opts := s.opts
	busy := int(opts.BusyTimeout / time.Millisecond)
	op := "open " + s.path
	abs, err := filepath.Abs(s.path)
	if err != nil {
		return wrap(op, err)
	}
	if err := checkNotTooNew(ctx, abs, busy); err != nil {
		var tooNew *TooNewError
		if errors.As(err, &tooNew) {
			return err
		}
		return wrap(op, err)
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return wrap(op, err)
	}
	if err := probeWritable(dir); err != nil {
		return wrap(op, err)
	}

	wparams := "_journal_mode=WAL&_foreign_keys=1&_synchronous=NORMAL&_txlock=immediate&_busy_timeout=" + strconv.Itoa(busy)
	if opts.writerReadOnly {
		wparams = "mode=ro&" + wparams
	}
	w, err := sql.Open(driverName, fileURI(abs, wparams))
	if err != nil {
		return wrap(op, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	s.w = w
	if err := migrate(ctx, w, opts.AppVersion, s.now()); err != nil {
		w.Close()
		var tooNew *TooNewError
		if errors.As(err, &tooNew) {
			return err
		}
		return wrap(op, err)
	}

	r, err := sql.Open(driverName, fileURI(abs, "mode=ro&_busy_timeout="+strconv.Itoa(busy)))
	if err != nil {
		w.Close()
		return wrap(op, err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		w.Close()
		return wrap(op, err)
	}
	s.r = r
	return nil
}

// Close closes both pools; the last connection checkpoints the write-ahead log.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.r.Close(), s.w.Close())
}

// Path returns the database file path given to Open.
func (s *Store) Path() string { return s.path }

// write runs fn in one BEGIN IMMEDIATE transaction on the write connection and commits.
// Errors are classified and prefixed with op.
func (s *Store) write(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap(op, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return wrap(op, err)
	}
	return wrap(op, tx.Commit())
}

// read runs fn in one read transaction (a consistent snapshot) on the read pool.
func (s *Store) read(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return wrap(op, err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	return wrap(op, fn(tx))
}

// fileURI builds an SQLite URI filename (https://www.sqlite.org/uri.html) for path, so
// characters such as '?', '#' and '%' in folder names are escaped. path is absolute.
func fileURI(path, query string) string {
	p := filepath.ToSlash(path)
	if filepath.VolumeName(path) != "" { // C:/… on Windows becomes /C:/…
		p = "/" + p
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: query}
	return u.String()
}

// probeWritable creates and removes a file in dir, so a read-only folder or disk is
// reported as ErrReadOnly before SQLite turns it into a vaguer "unable to open".
func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".talaria-probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Stats are counts for the Diagnostics view.
type Stats struct {
	SchemaVersion   int
	Sessions        int64 // live sessions
	DeletedSessions int64 // tombstones
	Messages        int64
	JournalFrames   int64
	LiveStreams     int64 // streams not yet settled
}

// Stats counts rows (it scans the tables; meant for diagnostics, not hot paths).
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.read(ctx, "stats", func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT
			(SELECT user_version FROM pragma_user_version),
			(SELECT count(*) FROM sessions WHERE deleted_at IS NULL),
			(SELECT count(*) FROM sessions WHERE deleted_at IS NOT NULL),
			(SELECT count(*) FROM messages),
			(SELECT count(*) FROM journal),
			(SELECT count(*) FROM streams WHERE ended_at IS NULL)`).Scan(
			&st.SchemaVersion, &st.Sessions, &st.DeletedSessions, &st.Messages, &st.JournalFrames, &st.LiveStreams)
	})
	return st, err
}
