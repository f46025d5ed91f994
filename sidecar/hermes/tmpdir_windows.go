//go:build windows

package hermes

import (
	"io"
	"io/fs"
)

// staleOwner: Windows folders are never swept (a killed sidecar's gateway folder stays
// in %TEMP%; Hermes's terminal tool keeps its own files under HERMES_HOME there).
func staleOwner(dir string, pid int, info fs.FileInfo) bool { return false }

type noLock struct{}

func (noLock) Close() error { return nil }

// lockTempDir takes no lock on Windows, where nothing is swept.
func lockTempDir(string) (io.Closer, error) { return noLock{}, nil }
