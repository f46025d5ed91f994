package tools

import (
	"bytes"
	"os"
	"syscall"
	"unsafe"
)

const (
	openNonblock  = syscall.O_NONBLOCK | syscall.O_NOCTTY
	openDirectory = syscall.O_DIRECTORY
)

// fdPath returns the real path of an open file (fcntl F_GETPATH).
func fdPath(f *os.File) (string, bool) {
	buf := make([]byte, 1024) // MAXPATHLEN
	_, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETPATH, uintptr(unsafe.Pointer(&buf[0])))
	if e != 0 {
		return "", false
	}
	if i := bytes.IndexByte(buf, 0); i > 0 {
		return string(buf[:i]), true
	}
	return "", false
}

// linkCount is the number of hard links of an open file.
func linkCount(f *os.File, fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
