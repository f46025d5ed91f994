package tools

import (
	"os"
	"strconv"
	"syscall"
)

// openNonblock and openDirectory make opening a FIFO return at once and opening
// anything but a folder fail, where the OS has them.
const (
	openNonblock  = syscall.O_NONBLOCK | syscall.O_NOCTTY
	openDirectory = syscall.O_DIRECTORY
)

// fdPath returns the real path of an open file (readlink of /proc/self/fd/N).
func fdPath(f *os.File) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || len(p) == 0 || p[0] != '/' {
		return "", false
	}
	return p, true
}

func linkCount(f *os.File, fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
