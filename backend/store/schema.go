package store

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
)

// SchemaVersion is the newest schema this build knows. It is kept in PRAGMA user_version
// (authoritative) and mirrored in meta.schema_version. Open migrates older files forward
// and refuses newer ones with *TooNewError.
const SchemaVersion = 9

//go:embed schema_v1.sql
var schemaV1 string

//go:embed schema_v2.sql
var schemaV2 string

//go:embed schema_v3.sql
var schemaV3 string

//go:embed schema_v4.sql
var schemaV4 string

//go:embed schema_v5.sql
var schemaV5 string

//go:embed schema_v6.sql
var schemaV6 string

//go:embed schema_v7.sql
var schemaV7 string

//go:embed schema_v8.sql
var schemaV8 string

//go:embed schema_v9.sql
var schemaV9 string

// migration moves a database from version-1 to version. Migrations run in order inside
// one write transaction with the user_version update, so a failure leaves the file at
// its previous version. They are forward-only: there is no down.
type migration struct {
	version int
	name    string
	up      func(ctx context.Context, tx *sql.Tx) error
}

// migrations lists every schema step, contiguous from 1. A test may append to it.
var migrations = []migration{
	{version: 1, name: "initial schema", up: execSQL(schemaV1)},
	{version: 2, name: "session actions, drafts and full-text search", up: execSQL(schemaV2)},
	{version: 3, name: "hidden sessions and background tasks", up: execSQL(schemaV3)},
	{version: 4, name: "a chat's runtime, agent session and options", up: execSQL(schemaV4)},
	{version: 5, name: "approval audit log and redaction fingerprints", up: execSQL(schemaV5)},
	{version: 6, name: "attachments, summaries of older turns, each turn's figures", up: execSQL(schemaV6)},
	{version: 7, name: "the failure an error row stands for", up: execSQL(schemaV7)},
	{version: 8, name: "where an imported chat came from", up: execSQL(schemaV8)},
	{version: 9, name: "the latest summary of a chat found by index", up: execSQL(schemaV9)},
}

func execSQL(script string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, script)
		return err
	}
}

// latestVersion is the version of the last migration (SchemaVersion unless a test added
// steps).
func latestVersion() int { return migrations[len(migrations)-1].version }

// sqliteHeaderSize and the offsets below are from https://www.sqlite.org/fileformat.html.
const (
	sqliteHeaderSize    = 100
	headerUserVersionAt = 60
	sqliteMagic         = "SQLite format 3\x00"
)

// checkNotTooNew refuses a file written by a newer schema before any connection that
// could change it is opened. When the file has no write-ahead log with content, the
// version is read from the file header with plain file I/O, so not even -wal or -shm
// files are created; otherwise a read-only SQLite connection reads it. A missing, empty
// or foreign file is left for SQLite to judge.
func checkNotTooNew(ctx context.Context, path string, busy int) error {
	want := latestVersion()
	have, err := headerUserVersion(path)
	if err != nil || have < 0 {
		return err
	}
	if walHasContent(path) {
		have, err = readUserVersion(ctx, path, busy)
		if err != nil {
			return err
		}
	}
	if have > want {
		return &TooNewError{Have: have, Want: want, AppVersion: readAppVersion(ctx, path, busy)}
	}
	return nil
}

// walHasContent reports whether path has a non-empty write-ahead log.
func walHasContent(path string) bool {
	st, err := os.Stat(path + "-wal")
	return err == nil && st.Size() > 0
}

// headerUserVersion returns the user_version stored in the file header, or -1 when
// the file does not exist, is empty, or does not start with the SQLite magic.
func headerUserVersion(path string) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var hdr [sqliteHeaderSize]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return -1, nil
		}
		return 0, err
	}
	if string(hdr[:len(sqliteMagic)]) != sqliteMagic {
		return -1, nil
	}
	return int(int32(binary.BigEndian.Uint32(hdr[headerUserVersionAt:]))), nil
}

func openReadOnly(path string, busy int) (*sql.DB, error) {
	return sql.Open(driverName, fileURI(path, "mode=ro&_busy_timeout="+strconv.Itoa(busy)))
}

func readUserVersion(ctx context.Context, path string, busy int) (int, error) {
	db, err := openReadOnly(path, busy)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, err
	}
	return v, nil
}

// readAppVersion is best effort: a newer schema may have moved meta. Without WAL
// content nobody is writing the file, so it is opened immutable, which creates no -wal
// or -shm file beside it.
func readAppVersion(ctx context.Context, path string, busy int) string {
	var db *sql.DB
	var err error
	if walHasContent(path) {
		db, err = openReadOnly(path, busy)
	} else {
		db, err = sql.Open(driverName, fileURI(path, "mode=ro&immutable=1"))
	}
	if err != nil {
		return ""
	}
	defer db.Close()
	var v string
	_ = db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'app_version'").Scan(&v)
	return v
}

// migrate brings the database to latestVersion in one BEGIN IMMEDIATE transaction and
// records appVersion in meta. On a current database whose meta already names
// appVersion it writes nothing, but still takes the write lock and runs a write
// statement, so a read-only or locked file is reported by Open rather than by the
// first turn.
func migrate(ctx context.Context, db *sql.DB, appVersion string, now int64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op

	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return err
	}
	want := latestVersion()
	if have > want {
		var app string
		_ = tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'app_version'").Scan(&app)
		return &TooNewError{Have: have, Want: want, AppVersion: app}
	}
	for _, m := range migrations {
		if m.version <= have {
			continue
		}
		if err := m.up(ctx, tx); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
		level := slog.LevelInfo
		if have == 0 { // a new file: nothing worth telling
			level = slog.LevelDebug
		}
		slog.Log(ctx, level, "store: migrated", "from", have, "to", m.version, "step", m.name)
	}
	if have < want {
		// PRAGMA takes no bound parameters; want is an int we own.
		if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(want)); err != nil {
			return err
		}
		if err := setMeta(ctx, tx, "schema_version", strconv.Itoa(want)); err != nil {
			return err
		}
		if have == 0 {
			if err := setMeta(ctx, tx, "created_at", strconv.FormatInt(now, 10)); err != nil {
				return err
			}
		}
	}
	var app string
	err = tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'app_version'").Scan(&app)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if app != appVersion {
		if err := setMeta(ctx, tx, "app_version", appVersion); err != nil {
			return err
		}
	} else if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = value WHERE 0`); err != nil {
		// A write statement that changes nothing: SQLite still checks that the file is
		// writable (BEGIN IMMEDIATE alone does not, in WAL mode).
		return err
	}
	return tx.Commit()
}

func setMeta(ctx context.Context, tx *sql.Tx, key, value string) error {
	_, err := tx.ExecContext(ctx,
		"INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value)
	return err
}
