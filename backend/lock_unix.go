//go:build !windows

package backend

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrDataDirInUse is wrapped by the error Open returns when another Talaria process
// holds the data folder.
var ErrDataDirInUse = errors.New("another Talaria is using this data folder")

// lockDataDir takes an exclusive advisory lock (flock(2)) on <dir>/talaria.lock, held
// until the returned file is closed or the process dies (the kernel drops it, also after
// SIGKILL). A second process on the same folder — another login session, another D-Bus
// session, a symlinked path — gets ErrDataDirInUse instead of settling the first one's
// live turns.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "talaria.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot create %s: %w; check that the folder is writable", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s): quit the other Talaria first, or start this one with --data-dir pointing elsewhere", ErrDataDirInUse, dir)
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	return f, nil
}
