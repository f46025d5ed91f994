//go:build !linux

package app

import "time"

// OpenDisplay does nothing outside Linux: macOS's and Windows' webviews need no display
// server to be opened first.
func OpenDisplay(time.Duration) error { return nil }
