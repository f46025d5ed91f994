package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"time"
)

// The integrity check off the start-up path: the window opens on the store at once, and
// CheckIntegrity reads the whole file later, beside the running app (backend decides
// when: after an unclean shutdown, or when the last check is old). Damage found then is
// handled as CheckAndRecover handles it at start, under the open store (Recover).

const metaIntegrityChecked = "integrity_checked_at"

// CheckIntegrity runs PRAGMA quick_check on the store's file on a read-only connection
// of its own, so reads and writes go on meanwhile (WAL), and returns its complaints:
// none when the file is healthy. On a database of 1,000,000 messages it reads the whole
// file (about 2 s on the benchmark machine). Errors: the check could not run.
func (s *Store) CheckIntegrity(ctx context.Context) ([]string, error) {
	abs, err := filepath.Abs(s.path)
	if err != nil {
		return nil, wrap("check "+s.path, err)
	}
	problems, err := quickCheck(ctx, abs)
	if err != nil {
		return nil, wrap("check "+abs, err)
	}
	return problems, nil
}

// Recover replaces the store's damaged file by a fresh one holding what can be read, as
// CheckAndRecover does before Open (the damaged file is kept beside it, the report is
// saved for the window), while the store stays open: every read and write waits until
// the swap is done, then goes to the recovered file. problems are the complaints that
// led here (CheckIntegrity's), for the report. Streams and the journal are not carried
// over, so a turn running meanwhile cannot save its answer (its settlement fails as on
// a full disk). Errors: the copy or the rebuild failed (the damaged file is then left
// in place and reopened), or the file could not be opened again (the store is then
// closed: every later call fails).
func (s *Store) Recover(ctx context.Context, problems []string) (RecoveryReport, error) {
	abs, err := filepath.Abs(s.path)
	if err != nil {
		return RecoveryReport{}, wrap("recover "+s.path, err)
	}
	if len(problems) == 0 {
		problems = []string{"the integrity check reported damage"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = errors.Join(s.r.Close(), s.w.Close()) // a damaged file may fail its checkpoint
	rep, err := recoverDatabase(ctx, abs, problems, time.Now().UnixMilli())
	if oerr := s.openHandles(ctx); oerr != nil {
		return rep, errors.Join(err, oerr)
	}
	return rep, err
}

// IntegrityCheckedAt returns when CheckIntegrity last found the file healthy (epoch ms,
// as recorded by SetIntegrityCheckedAt); 0 when never.
func (s *Store) IntegrityCheckedAt(ctx context.Context) (int64, error) {
	var raw string
	err := s.read(ctx, "integrity check time", func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaIntegrityChecked).Scan(&raw)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	at, _ := strconv.ParseInt(raw, 10, 64)
	return at, nil
}

// SetIntegrityCheckedAt records when the file was last found healthy (epoch ms).
func (s *Store) SetIntegrityCheckedAt(ctx context.Context, at int64) error {
	return s.write(ctx, "record integrity check", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, metaIntegrityChecked, strconv.FormatInt(at, 10))
		return err
	})
}
