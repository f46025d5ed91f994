package store

import (
	"context"
	"database/sql"
	"errors"
)

// Setting returns the value stored under key and whether there is one. Secrets never
// belong here (they live in the OS keyring).
func (s *Store) Setting(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := s.read(ctx, "setting "+key, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

// SetSetting stores value under key, replacing any previous value.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	return s.write(ctx, "set setting "+key, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES(?, ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
}
