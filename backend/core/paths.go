package core

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// DefaultDataDir is the per-user data directory: $TALARIA_HOME when set; else
// $XDG_DATA_HOME/talaria or ~/.local/share/talaria on Linux, ~/Library/Application
// Support/Talaria on macOS, %AppData%\Talaria on Windows. It returns an error only when
// the home directory cannot be determined.
func DefaultDataDir() (string, error) {
	if d := os.Getenv("TALARIA_HOME"); d != "" {
		return filepath.Abs(d)
	}
	return UserDataDir()
}

// UserDataDir is the per-user data folder DefaultDataDir falls back to when
// TALARIA_HOME is not set (a login session may not have it set; the login entry names
// another folder only when the app runs on one: backend/settings' autostart).
func UserDataDir() (string, error) {
	switch runtime.GOOS {
	case "darwin", "windows":
		base, err := os.UserConfigDir() // ~/Library/Application Support, %AppData%
		if err != nil {
			return "", err
		}
		return filepath.Join(base, "Talaria"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "talaria"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory; set TALARIA_HOME to a folder for Talaria's data")
	}
	return filepath.Join(home, ".local", "share", "talaria"), nil
}

// Paths are the files and folders under a data directory.
type Paths struct {
	DataDir    string `json:"data_dir"`
	DBPath     string `json:"db_path"`
	LogDir     string `json:"log_dir"`
	AppLog     string `json:"app_log"`
	SidecarLog string `json:"sidecar_log"`
	CacheDir   string `json:"cache_dir"`
}

// CrashDir is the folder of the app process's crash reports (backend/crashlog), in the
// logs folder beside sidecar.log.
func (p Paths) CrashDir() string { return filepath.Join(p.LogDir, "crashes") }

// UserStateDir is the per-user folder of Talaria's state on Linux (its logs and crash
// reports): $XDG_STATE_HOME/talaria, else ~/.local/state/talaria (XDG Base Directory
// Specification 0.8). "" on macOS and Windows, where state stays in the data folder,
// and when the home folder is unknown.
func UserStateDir() string { return xdgDir("XDG_STATE_HOME", ".local/state") }

// UserCacheDir is the per-user folder of Talaria's caches on Linux: $XDG_CACHE_HOME/
// talaria, else ~/.cache/talaria. "" where UserStateDir is "".
func UserCacheDir() string { return xdgDir("XDG_CACHE_HOME", ".cache") }

func xdgDir(env, underHome string) string {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return ""
	}
	if x := os.Getenv(env); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "talaria")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, filepath.FromSlash(underHome), "talaria")
}

// Layout lays out dataDir as the app uses it: the per-user data folder (UserDataDir)
// keeps its logs in UserStateDir()/logs and its cache in UserCacheDir() on Linux (issue
// 26, item 9b); any other data folder (TALARIA_HOME, --data-dir: tests, a portable or
// second setup) keeps everything inside it, as PathsFor, so two setups never share a
// log. The database is always in the data folder.
func Layout(dataDir string) Paths {
	p := PathsFor(dataDir)
	user, err := UserDataDir()
	if err != nil || filepath.Clean(user) != filepath.Clean(dataDir) {
		return p
	}
	state, cache := UserStateDir(), UserCacheDir()
	if state == "" || cache == "" {
		return p
	}
	p.LogDir = filepath.Join(state, "logs")
	p.AppLog = filepath.Join(p.LogDir, "talaria.log")
	p.SidecarLog = filepath.Join(p.LogDir, "sidecar.log")
	p.CacheDir = cache
	return p
}

// PathsFor lays out dataDir with everything inside it (see Layout).
func PathsFor(dataDir string) Paths {
	logs := filepath.Join(dataDir, "logs")
	return Paths{DataDir: dataDir, DBPath: filepath.Join(dataDir, "talaria.db"), LogDir: logs,
		AppLog: filepath.Join(logs, "talaria.log"), SidecarLog: filepath.Join(logs, "sidecar.log"),
		CacheDir: filepath.Join(dataDir, "cache")}
}
