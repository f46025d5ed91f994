// Package hermestest finds the real Hermes Agent installs that scripts/hermes-setup.sh
// puts under the repository's .cache/ and writes throw-away HERMES_HOME folders that
// point them at a scripted provider (sidecar/providertest) on 127.0.0.1. It is for
// tests only; any package's tests may import it.
//
// Two installs are known (docs/hermes.md, "Versions checked"):
//
//   - "0.19.0": .cache/hermes-0.19.0, a virtualenv of the machine's Python 3.11 with
//     hermes-agent[acp]==0.19.0: gateway dialect A; `bin/hermes acp` is its ACP server.
//   - "newest": .cache/hermes-newest/root, a Debian sid folder system with Python 3.14
//     and the newest dialect-B Hermes of the package index in /opt/h. Its gateway runs
//     as `bwrap --bind ROOT / ... /opt/h/bin/python -m tui_gateway.entry` (Command):
//     the same network (so the provider on 127.0.0.1 answers), /tmp and the system's
//     temporary folder bound at the same paths (HERMES_HOME and workspaces made by
//     t.TempDir are seen by Hermes at their own paths), and the process dies with its
//     parent.
//
// A missing install fails the test (t.Fatal) with the command that installs it: a
// skipped real-component test would pass for the wrong reason.
package hermestest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Names of the installs.
const (
	NameA      = "0.19.0" // hermes-agent 0.19.0, gateway dialect A
	NameNewest = "newest" // the newest dialect-B Hermes on the package index
)

// Install is one installed Hermes Agent the tests can start.
type Install struct {
	// Name is NameA or NameNewest.
	Name string
	// Package and Version are the installed distribution's name and version, read from
	// its .dist-info (e.g. "hermes-agent", "0.19.0").
	Package, Version string
	// Dialect is the gateway dialect this install is expected to speak: "A" or "B".
	Dialect string
	// Python is the interpreter as the gateway command sees it: an absolute path on
	// this machine for a venv, a path inside Root for the folder system.
	Python string
	// Prefix are the words before Python in the gateway's command (bubblewrap for the
	// folder system); nil for a venv.
	Prefix []string
	// Root is the folder system's root ("" for a venv); SitePackages the folder (on
	// this machine) holding tui_gateway/ and hermes_cli/, for reading the source.
	Root, SitePackages string
	// Hermes is the `hermes` launcher on this machine ("" when there is none outside
	// the folder system).
	Hermes string
}

// GatewayCommand is the whole command that starts this install's gateway over stdio:
// Prefix, Python, "-m", "tui_gateway.entry".
func (in Install) GatewayCommand() []string {
	return append(append(append([]string(nil), in.Prefix...), in.Python), "-m", "tui_gateway.entry")
}

// RepoRoot returns the repository root: the nearest folder above the working directory
// holding go.mod. Errors: none found.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("hermestest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Find returns the install called name (NameA or NameNewest). Errors: unknown name, the
// install is missing or incomplete (the message says to run scripts/hermes-setup.sh).
func Find(name string) (Install, error) {
	root, err := RepoRoot()
	if err != nil {
		return Install{}, err
	}
	const hint = "run scripts/hermes-setup.sh (make setup does) to install the real Hermes Agent the tests drive"
	switch name {
	case NameA:
		dir := filepath.Join(root, ".cache", "hermes-0.19.0")
		in := Install{Name: name, Dialect: "A", Python: filepath.Join(dir, "bin", "python")}
		if _, err := os.Stat(in.Python); err != nil {
			return Install{}, fmt.Errorf("hermestest: hermes-agent 0.19.0 is not installed in %s: %s", dir, hint)
		}
		sp, err := sitePackages(filepath.Join(dir, "lib"))
		if err != nil {
			return Install{}, fmt.Errorf("hermestest: %v: %s", err, hint)
		}
		in.SitePackages = sp
		in.Package, in.Version, err = distribution(sp)
		if err != nil {
			return Install{}, fmt.Errorf("hermestest: %v: %s", err, hint)
		}
		if h := filepath.Join(dir, "bin", "hermes"); fileExists(h) {
			in.Hermes = h
		}
		return in, nil
	case NameNewest:
		dir := filepath.Join(root, ".cache", "hermes-newest")
		rootfs := filepath.Join(dir, "root")
		if !fileExists(filepath.Join(rootfs, "opt", "h", "pyvenv.cfg")) || !fileExists(filepath.Join(dir, ".talaria-installed")) {
			return Install{}, fmt.Errorf("hermestest: the newest Hermes is not installed in %s: %s", rootfs, hint)
		}
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			return Install{}, fmt.Errorf("hermestest: bubblewrap (bwrap) is needed to run the newest Hermes in its folder system: apt-get install bubblewrap, or %s", hint)
		}
		sp, err := sitePackages(filepath.Join(rootfs, "opt", "h", "lib"))
		if err != nil {
			return Install{}, fmt.Errorf("hermestest: %v: %s", err, hint)
		}
		in := Install{Name: name, Dialect: "B", Python: "/opt/h/bin/python", Root: rootfs, SitePackages: sp,
			Prefix: FolderSystemPrefix(bwrap, rootfs)}
		in.Package, in.Version, err = distribution(sp)
		if err != nil {
			return Install{}, fmt.Errorf("hermestest: %v: %s", err, hint)
		}
		return in, nil
	}
	return Install{}, fmt.Errorf("hermestest: unknown install %q (want %q or %q)", name, NameA, NameNewest)
}

// FolderSystemPrefix is the bubblewrap command that runs a program inside the folder
// system at rootfs: the root bound read-write, fresh /dev and /proc, /tmp and the
// system's temporary folder bound at their own paths, the host's network, and the
// program killed when its parent dies.
func FolderSystemPrefix(bwrap, rootfs string) []string {
	p := []string{bwrap, "--bind", rootfs, "/", "--dev", "/dev", "--proc", "/proc", "--bind", "/tmp", "/tmp"}
	if tmp := filepath.Clean(os.TempDir()); tmp != "/tmp" && !strings.HasPrefix(tmp, "/tmp/") {
		p = append(p, "--bind", tmp, tmp)
	}
	return append(p, "--die-with-parent", "--")
}

// Require returns the install called name, or fails the test with what to run.
func Require(t testing.TB, name string) Install {
	t.Helper()
	in, err := Find(name)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// All returns both installs (NameA, then NameNewest), failing the test when either is
// missing.
func All(t testing.TB) []Install {
	t.Helper()
	return []Install{Require(t, NameA), Require(t, NameNewest)}
}

// Config is what NewHome writes into config.yaml. Zero fields take the defaults.
type Config struct {
	// BaseURL is the scripted provider's base URL ("http://127.0.0.1:PORT/v1"); required.
	BaseURL string
	// Model is the model name (default "scripted-model").
	Model string
	// ApprovalMode is approvals.mode (default "manual": every dangerous command asks;
	// 0.19's own default "smart" asks a model first).
	ApprovalMode string
	// Toolsets is HERMES_TUI_TOOLSETS (default "terminal,file,clarify,todo").
	Toolsets string
	// Extra members merged into the top level of config.yaml (e.g. {"display":
	// {"busy_input_mode": "queue"}}); they replace a default member of the same name.
	Extra map[string]any
	// ModelExtra members are added to config.yaml's model member (e.g.
	// {"supports_vision": true}).
	ModelExtra map[string]any
}

// Home is a throw-away HERMES_HOME.
type Home struct {
	// Dir is the HERMES_HOME folder (inside the test's temporary folder).
	Dir string
	// Env is what a gateway started with this home needs in its environment:
	// HERMES_HOME and HERMES_TUI_TOOLSETS.
	Env []string
}

// NewHome writes a HERMES_HOME for in under t.TempDir(): config.yaml (the provider
// "custom" at cfg.BaseURL with a fixed context length, manual approvals, no title
// generation, no tirith download, no memory, no curator, no background skill review),
// and .update_check pre-seeded
// so Hermes does not ask the package index for a newer version. See
// /work/shared/design/HERMES.md and docs/hermes.md ("Tests").
func NewHome(t testing.TB, in Install, cfg Config) Home {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hermes-home")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h, err := WriteHome(dir, in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// WriteHome is NewHome into an existing folder dir. Errors: no BaseURL, a write failure.
func WriteHome(dir string, in Install, cfg Config) (Home, error) {
	if cfg.BaseURL == "" {
		return Home{}, errors.New("hermestest: Config.BaseURL is required")
	}
	if cfg.Model == "" {
		cfg.Model = "scripted-model"
	}
	if cfg.ApprovalMode == "" {
		cfg.ApprovalMode = "manual"
	}
	if cfg.Toolsets == "" {
		cfg.Toolsets = "terminal,file,clarify,todo"
	}
	conf := map[string]any{
		"model":     map[string]any{"provider": "custom", "base_url": cfg.BaseURL, "default": cfg.Model, "context_length": 131072},
		"approvals": map[string]any{"mode": cfg.ApprovalMode},
		"auxiliary": map[string]any{"title_generation": map[string]any{"enabled": false}},
		"security":  map[string]any{"tirith_enabled": false},
		"memory":    map[string]any{"memory_enabled": false, "user_profile_enabled": false, "nudge_interval": 0},
		"curator":   map[string]any{"enabled": false},
		// No background skill review (every 10 tool iterations by default it makes its
		// own model calls, which would take a test's scripted turns).
		"skills": map[string]any{"creation_nudge_interval": 0},
	}
	for k, v := range cfg.ModelExtra {
		conf["model"].(map[string]any)[k] = v
	}
	for k, v := range cfg.Extra {
		conf[k] = v
	}
	// JSON is YAML: no YAML library needed to write it.
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return Home{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), append(b, '\n'), 0o600); err != nil {
		return Home{}, err
	}
	check, _ := json.Marshal(map[string]any{"ts": time.Now().Unix(), "behind": 0, "rev": nil, "ver": in.Version})
	if err := os.WriteFile(filepath.Join(dir, ".update_check"), check, 0o600); err != nil {
		return Home{}, err
	}
	return Home{Dir: dir, Env: []string{"HERMES_HOME=" + dir, "HERMES_TUI_TOOLSETS=" + cfg.Toolsets}}, nil
}

// sitePackages returns lib/python3.*/site-packages under lib.
func sitePackages(lib string) (string, error) {
	m, _ := filepath.Glob(filepath.Join(lib, "python3.*", "site-packages"))
	for _, sp := range m {
		if fileExists(filepath.Join(sp, "tui_gateway", "entry.py")) {
			return sp, nil
		}
	}
	return "", fmt.Errorf("no site-packages with tui_gateway under %s", lib)
}

// distribution reads the name and version of the Hermes distribution in sp (the
// .dist-info that ships tui_gateway).
func distribution(sp string) (name, version string, err error) {
	m, _ := filepath.Glob(filepath.Join(sp, "hermes_agent*.dist-info", "METADATA"))
	for _, meta := range m {
		b, err := os.ReadFile(meta)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Name: "); ok && name == "" {
				name = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "Version: "); ok && version == "" {
				version = strings.TrimSpace(v)
			}
			if line == "" {
				break
			}
		}
		if name != "" && version != "" {
			return name, version, nil
		}
	}
	return "", "", fmt.Errorf("no hermes-agent distribution metadata in %s", sp)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
