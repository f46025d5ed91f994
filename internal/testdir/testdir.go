// Package testdir gives tests folders outside /tmp. A sandboxed command (bubblewrap)
// sees /tmp as its own empty tmpfs, so a test of what the sandbox hides, binds
// read-only or lets a command write needs its folders elsewhere: under the user's
// cache folder ($XDG_CACHE_HOME or ~/.cache).
package testdir

import (
	"os"
	"testing"
)

// OutsideTmp returns a new empty folder under the user's cache folder, named
// prefix + a random suffix, removed when the test ends. It fails the test when the
// folder cannot be made.
func OutsideTmp(t testing.TB, prefix string) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no cache folder for a folder outside /tmp: %v", err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp(base, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
