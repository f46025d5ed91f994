//go:build unix && !linux && !darwin

package tools

import (
	"os"
	"syscall"
)

const (
	openNonblock  = syscall.O_NONBLOCK | syscall.O_NOCTTY
	openDirectory = syscall.O_DIRECTORY
)

// fdPath cannot name an open file on this OS.
func fdPath(f *os.File) (string, bool) { return "", false }

// linkCount is the number of hard links of an open file.
func linkCount(f *os.File, fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
