package link

import (
	"io/fs"
	"os/exec"
)

// detach does nothing on Windows: remote hosts are Linux or macOS (backend/remote's
// probe refuses others), so a daemon never starts here.
func detach(*exec.Cmd) {}

// ownedByUser is true on Windows, where a folder's mode bits say nothing of its owner.
func ownedByUser(fs.FileInfo) bool { return true }
