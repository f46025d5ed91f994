//go:build !cgo

package store

// classifySQLite: without cgo, go-sqlite3 is a stub that cannot open a database (and
// has no error codes); this file only lets the package compile where no C toolchain
// for the target exists, e.g. `GOOS=darwin go vet` without the macOS SDK.
func classifySQLite(err error) (error, bool) { return nil, false }
