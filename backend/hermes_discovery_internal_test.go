//go:build linux

package backend

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"talaria/sidecar/hermes/hermestest"
)

// Discovery finds the real Hermes 0.19.0 the way a user's machine has it: as the venv
// of ~/.hermes/hermes-agent, as the `hermes` command on PATH (through its shebang), or
// from the Settings override (a folder, a launcher or a Python); it lists the home's
// profiles; with nothing installed it says how to install Hermes.
func TestDiscoverHermes(t *testing.T) {
	in := hermestest.Require(t, hermestest.NameA)
	venv := filepath.Dir(filepath.Dir(in.Python)) // .cache/hermes-0.19.0
	ctx := context.Background()

	t.Run("~/.hermes/hermes-agent venv, with profiles", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		t.Setenv("HERMES_HOME", "")
		t.Setenv("PATH", "/usr/bin:/bin")
		os.MkdirAll(filepath.Join(home, ".hermes", "hermes-agent"), 0o755)              //nolint:errcheck
		os.Symlink(venv, filepath.Join(home, ".hermes", "hermes-agent", "venv"))        //nolint:errcheck
		os.MkdirAll(filepath.Join(home, ".hermes", "profiles", "work"), 0o755)          //nolint:errcheck
		os.MkdirAll(filepath.Join(home, ".hermes", "profiles", "Not A Profile"), 0o755) //nolint:errcheck
		got := discoverHermes(ctx, HermesConfig{}, "", "")
		if got.Problem != "" || got.Version != "0.19.0" || got.Source != "~/.hermes/hermes-agent" || got.Home != filepath.Join(home, ".hermes") {
			t.Fatalf("%+v", got)
		}
		if !slices.Equal(got.Profiles, []string{"default", "work"}) {
			t.Errorf("profiles %v", got.Profiles)
		}
	})

	t.Run("hermes on PATH through its shebang", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		bin := t.TempDir()
		os.WriteFile(filepath.Join(bin, "hermes"), []byte("#!"+in.Python+"\nimport sys\n"), 0o755) //nolint:errcheck
		t.Setenv("PATH", bin+":/usr/bin:/bin")
		got := discoverHermes(ctx, HermesConfig{}, "", filepath.Join(home, "hh"))
		if got.Problem != "" || got.Python != in.Python || !strings.HasPrefix(got.Source, "PATH") || got.Home != filepath.Join(home, "hh") {
			t.Fatalf("%+v", got)
		}
	})

	t.Run("the Settings override: a folder, a launcher or a Python", func(t *testing.T) {
		t.Setenv("HOME", t.TempDir())
		t.Setenv("PATH", "/usr/bin:/bin")
		for _, p := range []string{venv, filepath.Join(venv, "bin", "hermes"), in.Python} {
			got := discoverHermes(ctx, HermesConfig{}, p, "")
			if got.Problem != "" || got.Version != "0.19.0" || got.Source != "settings" {
				t.Errorf("%s: %+v", p, got)
			}
		}
		got := discoverHermes(ctx, HermesConfig{}, "/no/such/hermes", "")
		if got.Problem == "" || !strings.Contains(got.Problem, "/no/such/hermes") {
			t.Errorf("a bad override: %+v", got)
		}
	})

	t.Run("a wrong interpreter in Settings says which Python to choose", func(t *testing.T) {
		t.Setenv("HOME", t.TempDir())
		t.Setenv("PATH", "/usr/bin:/bin")
		// The machine's own Python (no Hermes in it), and a program that is not Python.
		for _, c := range []struct{ path, word string }{{"/usr/bin/python3", "has no Hermes Agent installed"}, {"/bin/true", "did not answer as a Python interpreter"}} {
			if _, err := os.Stat(c.path); err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			got := discoverHermes(ctx, HermesConfig{}, c.path, "")
			if !strings.Contains(got.Problem, c.word) || !strings.Contains(got.Hint, "venv/bin/python") {
				t.Errorf("%s: %+v", c.path, got)
			}
		}
	})

	t.Run("nothing installed says how to install it", func(t *testing.T) {
		t.Setenv("HOME", t.TempDir())
		t.Setenv("PATH", "/usr/bin:/bin")
		got := discoverHermes(ctx, HermesConfig{}, "", "")
		if !strings.Contains(got.Problem, "not found") || !strings.Contains(got.Hint, "pip install hermes-agent") {
			t.Errorf("%+v", got)
		}
	})
}
