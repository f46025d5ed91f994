//go:build windows

package hermes

import "io/fs"

// staleOwner: Windows folders are never swept (a killed sidecar's gateway folder stays
// in %TEMP%; Hermes's terminal tool keeps its own files under HERMES_HOME there).
func staleOwner(pid int, info fs.FileInfo) bool { return false }
