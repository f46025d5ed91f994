//go:build unix

package hermes

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// staleOwner reports whether the gateway folder described by info, made by the sidecar
// of process pid, is left over: the folder is this user's and no process pid exists
// (kill(pid, 0) fails with ESRCH; EPERM means some other user's live process has it).
func staleOwner(pid int, info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
