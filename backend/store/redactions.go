package store

import (
	"context"
	"database/sql"
)

// Redaction fingerprints (schema_v5.sql): keyed fingerprints of known secrets and their
// encoded forms, never the secrets. The vault computes and checks them.

// Fingerprint is one stored form of a secret: MAC is its HMAC-SHA256 under the key
// KeyID names, Length its length in bytes, Roll its keyed rolling hash.
type Fingerprint struct {
	MAC       []byte
	KeyID     string
	Length    int
	Roll      uint64
	CreatedAt int64
}

// AddFingerprints stores fingerprints; ones already stored are left as they are.
func (s *Store) AddFingerprints(ctx context.Context, fps []Fingerprint) error {
	if len(fps) == 0 {
		return nil
	}
	now := s.now()
	return s.write(ctx, "add fingerprints", func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO redactions(mac, key_id, length, roll, created_at) VALUES (?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, f := range fps {
			at := f.CreatedAt
			if at == 0 {
				at = now
			}
			if _, err := st.ExecContext(ctx, f.MAC, f.KeyID, f.Length, int64(f.Roll), at); err != nil {
				return err
			}
		}
		return nil
	})
}

// Fingerprints returns the stored fingerprints made under keyID.
func (s *Store) Fingerprints(ctx context.Context, keyID string) ([]Fingerprint, error) {
	var out []Fingerprint
	err := s.read(ctx, "fingerprints", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT mac, key_id, length, roll, created_at FROM redactions WHERE key_id = ?`, keyID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f Fingerprint
			var roll int64
			if err := rows.Scan(&f.MAC, &f.KeyID, &f.Length, &roll, &f.CreatedAt); err != nil {
				return err
			}
			f.Roll = uint64(roll)
			out = append(out, f)
		}
		return rows.Err()
	})
	return out, err
}

// ClearFingerprints removes every fingerprint (the user forgot all secrets) and
// returns how many there were.
func (s *Store) ClearFingerprints(ctx context.Context) (int64, error) {
	var n int64
	err := s.write(ctx, "clear fingerprints", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM redactions`)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
