package tools

import (
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// Windows has no FIFOs in the file system and no O_DIRECTORY.
const (
	openNonblock  = 0
	openDirectory = 0
)

// fdPath returns the real path of an open file (GetFinalPathNameByHandle).
func fdPath(f *os.File) (string, bool) {
	buf := make([]uint16, syscall.MAX_PATH)
	for {
		n, err := windows.GetFinalPathNameByHandle(windows.Handle(f.Fd()), &buf[0], uint32(len(buf)), 0)
		if err != nil {
			return "", false
		}
		if int(n) < len(buf) {
			p := syscall.UTF16ToString(buf[:n])
			p = strings.TrimPrefix(p, `\\?\`)
			return p, true
		}
		buf = make([]uint16, n+1)
	}
}

// linkCount is the number of hard links of an open file (GetFileInformationByHandle).
func linkCount(f *os.File, fi os.FileInfo) uint64 {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return 1
	}
	return uint64(info.NumberOfLinks)
}
