package hermes

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The gateway's private temporary folder. Hermes's terminal tool writes a snapshot of
// its whole environment, secrets included, to $TMPDIR/hermes-snap-<id>.sh (and its
// working directory to hermes-cwd-<id>.txt), /tmp when TMPDIR, TMP and TEMP are unset,
// and deletes them only in its own clean-up, which a killed gateway never runs
// (tools/environments/base.py, local.py). So each gateway gets TMPDIR, TMP and TEMP
// pointing at a folder of its own, os.TempDir()/talaria-hermes-<sidecar pid>-<random>
// (0700), removed once the gateway has exited. A sidecar killed before it could remove
// its folders leaves them behind; the next runtime's start removes those whose sidecar
// is gone (sweepStaleTempDirs).

// tempDirPrefix starts the name of every gateway's temporary folder.
const tempDirPrefix = "talaria-hermes-"

// newTempDir makes a gateway's private temporary folder (0700, os.MkdirTemp), named
// after this process's pid so a later sweep can tell a live owner from a dead one.
func newTempDir() (string, error) {
	return os.MkdirTemp("", fmt.Sprintf("%s%d-*", tempDirPrefix, os.Getpid()))
}

// tempEnv are the environment entries that point a gateway's temporary files at dir
// (TMPDIR for Hermes's terminal tool and POSIX programs, TMP and TEMP for Python's
// tempfile on every system and for Windows programs).
func tempEnv(dir string) []string {
	return []string{"TMPDIR=" + dir, "TMP=" + dir, "TEMP=" + dir}
}

// tempDirOwner parses a folder name made by newTempDir: tempDirPrefix, the owner's
// pid, "-", os.MkdirTemp's random digits. ok is false for any other name, and for a
// pid that is not a positive process id (0 and negative ids name process groups for
// kill(2)).
func tempDirOwner(name string) (pid int, ok bool) {
	rest, ok := strings.CutPrefix(name, tempDirPrefix)
	if !ok {
		return 0, false
	}
	p, suffix, ok := strings.Cut(rest, "-")
	if !ok || !allDigits(p) || !allDigits(suffix) {
		return 0, false
	}
	n, err := strconv.ParseInt(p, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sweepStaleTempDirs removes the gateway folders in root (os.TempDir()) that a sidecar
// killed before it could remove them left behind: folders (not links) whose name
// tempDirOwner parses, whose owner is not this process, and whose owner is gone
// (staleOwner: its owner lock is free, or without one its pid is; Unix only, none are
// removed on Windows), after killing the processes that still hold one as their TMPDIR
// (killLeftovers: the terminal commands of a gateway killed with its sidecar). A
// folder of a live sidecar, or a name that does not parse, is never touched. It
// returns the folders removed.
func sweepStaleTempDirs(root string, log *slog.Logger) []string {
	ents, err := os.ReadDir(root)
	if err != nil {
		log.Debug("could not list the temporary folder for stale Hermes gateway folders", "dir", root, "err", err)
		return nil
	}
	var removed []string
	for _, e := range ents {
		if !e.IsDir() { // a DirEntry's type is the link's own: links are skipped
			continue
		}
		pid, ok := tempDirOwner(e.Name())
		if !ok || pid == os.Getpid() {
			continue
		}
		path := filepath.Join(root, e.Name())
		info, err := os.Lstat(path)
		if err != nil || !info.IsDir() || !staleOwner(path, pid, info) {
			continue
		}
		// A gateway killed with its sidecar (the parent-death signal) left its
		// terminal's commands running: they end now.
		if n := killLeftovers(path); n > 0 {
			log.Info("killed what a Hermes gateway whose sidecar is gone left running", "processes", n, "dir", path)
		}
		if err := os.RemoveAll(path); err != nil {
			log.Warn("could not remove a stale Hermes gateway folder", "dir", path, "err", err)
			continue
		}
		log.Info("removed the temporary folder of a Hermes gateway whose sidecar is gone", "dir", path, "pid", pid)
		removed = append(removed, path)
	}
	return removed
}
