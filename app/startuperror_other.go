//go:build !windows

package app

// ShowStartupError does nothing outside Windows: there the error printed on stderr is
// what the user sees (a terminal, or the session's journal for a launcher).
func ShowStartupError(err error) {}
