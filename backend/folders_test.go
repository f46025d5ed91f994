package backend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"talaria/backend"
	"talaria/backend/core"
	"talaria/backend/vault"
)

// TestStateAndCacheFolders (issue 26, item 9b): on Linux the per-user data folder's
// logs go to $XDG_STATE_HOME/talaria/logs and its cache to $XDG_CACHE_HOME/talaria; the
// logs and cache an older version kept in the data folder move there once, with their
// contents, and the database stays in the data folder. A data folder given explicitly
// keeps everything inside it.
func TestStateAndCacheFolders(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("the XDG state and cache folders are Linux's")
	}
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("TALARIA_HOME", "")
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "data-home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state-home"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache-home"))
	data, err := core.UserDataDir()
	if err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(root, "state-home", "talaria", "logs")
	cache := filepath.Join(root, "cache-home", "talaria")

	// An older version's data folder: logs and cache inside it.
	old := map[string]string{
		filepath.Join(data, "logs", "talaria.log"):            "time=1 msg=\"an old run\"\n",
		filepath.Join(data, "logs", "sidecar.log"):            "old sidecar\n",
		filepath.Join(data, "logs", "talaria-2026-01-01.log"): "rotated\n",
		filepath.Join(data, "cache", "models", "list.json"):   "[]",
	}
	for p, body := range old {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	open := func(dir string) *backend.Service {
		t.Helper()
		svc, err := backend.Open(context.Background(), backend.Options{DataDir: dir, DefaultWorkspace: filepath.Join(root, "ws"),
			Version: "test", Keyring: vault.NewMemoryKeyring()})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	svc := open(data)
	p := svc.Paths
	if p.LogDir != logs || p.AppLog != filepath.Join(logs, "talaria.log") || p.SidecarLog != filepath.Join(logs, "sidecar.log") ||
		p.CacheDir != cache || p.CrashDir() != filepath.Join(logs, "crashes") || p.DBPath != filepath.Join(data, "talaria.db") {
		t.Fatalf("paths of the per-user data folder: %+v", p)
	}
	svc.Log.Info("a new run")
	if err := svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	moved := map[string]string{
		filepath.Join(logs, "sidecar.log"):            "old sidecar\n",
		filepath.Join(logs, "talaria-2026-01-01.log"): "rotated\n",
		filepath.Join(cache, "models", "list.json"):   "[]",
	}
	for p, want := range moved {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", p, b, err, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(logs, "talaria.log")); err != nil || !containsAll(string(b), "an old run", "a new run") {
		t.Errorf("talaria.log did not move and go on: %q %v", b, err)
	}
	for _, gone := range []string{filepath.Join(data, "logs"), filepath.Join(data, "cache")} {
		if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still in the data folder (%v)", gone, err)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "talaria.db")); err != nil {
		t.Errorf("the database left the data folder: %v", err)
	}

	// The next start finds nothing to move and changes nothing.
	svc = open(data)
	if svc.Paths.LogDir != logs {
		t.Fatalf("the second start logs to %s", svc.Paths.LogDir)
	}
	svc.Close(context.Background())
	if b, _ := os.ReadFile(filepath.Join(logs, "sidecar.log")); string(b) != "old sidecar\n" {
		t.Errorf("the second start changed sidecar.log: %q", b)
	}

	// A data folder given explicitly keeps its logs and cache inside it.
	other := filepath.Join(root, "portable")
	svc = open(other)
	defer svc.Close(context.Background())
	if svc.Paths.LogDir != filepath.Join(other, "logs") || svc.Paths.CacheDir != filepath.Join(other, "cache") {
		t.Fatalf("paths of an explicit data folder: %+v", svc.Paths)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
