//go:build unix

package hermes

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ownerLockName is the file in a gateway's folder on which its sidecar holds an
// exclusive flock(2) while the gateway lives. The lock goes with the sidecar however it
// ends, so a sweep tells a live owner from a dead one even where the pid in the
// folder's name means nothing: a sidecar in another pid namespace sharing /tmp, or a
// dead sidecar's pid taken by another process since.
const ownerLockName = ".talaria-owner"

// staleGrace is how old a folder without an owner lock must be before its pid alone
// can mark it stale (a sidecar makes the folder, then its lock, a moment later).
const staleGrace = time.Minute

// lockTempDir takes the owner lock of dir (made by newTempDir) and returns what
// releases it. Errors: the file cannot be made or locked.
func lockTempDir(dir string) (io.Closer, error) {
	f, err := os.OpenFile(filepath.Join(dir, ownerLockName), os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// staleOwner reports whether the gateway folder dir (described by info), named after
// process pid, is left over. It must be this user's. With an owner lock, the lock
// decides: free means its sidecar is gone. Without one (a folder being made right now,
// or one made before the lock existed) it is stale only when older than staleGrace and
// no process pid exists (kill(pid, 0) fails with ESRCH; EPERM means some other user's
// live process has that pid).
func staleOwner(dir string, pid int, info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() {
		return false
	}
	if f, err := os.OpenFile(filepath.Join(dir, ownerLockName), os.O_RDONLY|syscall.O_NOFOLLOW, 0); err == nil {
		defer f.Close()
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
	}
	return time.Since(info.ModTime()) > staleGrace && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
