//go:build cgo

package store

import (
	"errors"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// classifySQLite maps a driver error (sqlite3.Error) to a sentinel; ok is false for
// errors that are not the driver's.
func classifySQLite(err error) (_ error, ok bool) {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrReadonly, sqlite3.ErrPerm:
			return fmt.Errorf("%w (%w)", ErrReadOnly, err), true
		case sqlite3.ErrFull:
			return fmt.Errorf("%w (%w)", ErrDiskFull, err), true
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return fmt.Errorf("%w (%w)", ErrLocked, err), true
		case sqlite3.ErrCorrupt, sqlite3.ErrNotADB:
			return fmt.Errorf("%w (%w)", ErrCorrupt, err), true
		case sqlite3.ErrConstraint:
			if se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey || se.ExtendedCode == sqlite3.ErrConstraintUnique {
				return fmt.Errorf("%w (%w)", ErrConflict, err), true
			}
		}
		return err, true
	}
	return nil, false
}
