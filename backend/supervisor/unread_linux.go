//go:build linux

package supervisor

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pipeUnread returns how many bytes written to w (a pipe's write end, *os.File) are
// still unread in the pipe (FIONREAD, spelled TIOCINQ in x/sys/unix, which Linux answers on either end of a pipe: pipe(7)), or
// -1 when w is not a file or the count cannot be read.
func pipeUnread(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return -1
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	if cerr := rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	}); cerr != nil {
		return -1
	}
	return n
}
