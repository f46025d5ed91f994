//go:build !windows

package link

import (
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own, so the end of the connection that started
// it (SIGHUP to its process group) does not end it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// ownedByUser reports whether fi belongs to this process's user.
func ownedByUser(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
