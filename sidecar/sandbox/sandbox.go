// Package sandbox runs commands confined under a policy: what of the filesystem they
// may read and write, whether they reach the network, which paths they never see. It is
// the one place every command the agent side starts goes through: the built-in
// terminal tool, an ACP agent's terminal/* requests, stdio MCP servers.
//
// On Linux the confinement is bubblewrap (bwrap, https://github.com/containers/bubblewrap):
// a new mount namespace with the whole filesystem bound read-only, the workspace (and
// any extra writable path) bound read-write, secret stores and the app's data folder
// hidden under empty read-only mounts, a private /tmp, a fresh /dev and /proc; new PID,
// IPC, UTS, cgroup and (unless network is allowed) network namespaces; --die-with-parent
// so nothing a command starts outlives the process that started it. It works as root
// and, through unprivileged user namespaces, as an ordinary user (see Check for what
// each case needs). Elsewhere (macOS, Windows today) no confinement is available:
// Check says so and Command refuses every confined policy with *UnavailableError, so a
// caller can ask the user instead of running unconfined silently. docs/sandbox.md has
// the design, the macOS and Windows plans included.
//
// The API is small on purpose:
//
//	st := sandbox.Check()                       // available? why not? what to do?
//	cmd, err := sandbox.Command(ctx, policy, argv, env, dir)
//	cmd.Stdout = ...; cmd.Start(); ...; sandbox.Kill(cmd)
//
// Command returns an *exec.Cmd the caller wires (stdin, stdout, stderr) and starts; the
// process runs in its own process group. Under bubblewrap its PID namespace holds a
// lifeline (the read end of a pipe, ExtraFiles[0]: append further files after it): when
// the process that started the command dies, however it dies, or Kill is called, a
// watcher beside the command kills everything in the namespace. Kill ends the command
// with everything it started; call it when done.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is how much of the filesystem a confined command may change.
type Mode string

// Modes, named like the leading coding agents' policies.
const (
	// ModeReadOnly: the whole filesystem read-only, the workspace included; only the
	// private /tmp is writable.
	ModeReadOnly Mode = "read-only"
	// ModeWorkspaceWrite (the default): the workspace and Policy.Writable read-write,
	// everything else read-only.
	ModeWorkspaceWrite Mode = "workspace-write"
	// ModeFullAccess: no filesystem or network confinement. Policy.Hidden (the app's own
	// data folder) stays hidden and, where bubblewrap is available, the command still
	// runs in its own PID namespace so nothing it starts outlives it.
	ModeFullAccess Mode = "full-access"
)

// DefaultMode is the mode of a policy that names none.
const DefaultMode = ModeWorkspaceWrite

// Valid reports whether m is one of the three modes.
func (m Mode) Valid() bool {
	return m == ModeReadOnly || m == ModeWorkspaceWrite || m == ModeFullAccess
}

// Policy says how one command is confined.
type Policy struct {
	// Mode is read-only, workspace-write or full-access ("" means DefaultMode).
	Mode Mode
	// Network allows network access (ignored in full access, which always has it).
	// Without it the command has only its own loopback interface: nothing on the
	// host's 127.0.0.1 or beyond is reachable.
	Network bool
	// Workspace is the absolute folder the command works in; read-write in
	// workspace-write mode, read-only in read-only mode.
	Workspace string
	// Writable are further absolute paths bound read-write in workspace-write mode
	// (each must exist).
	Writable []string
	// ReadOnly are further absolute paths made visible read-only in the confined modes,
	// where the sandbox would otherwise replace them (the private /tmp and /var/tmp):
	// a program's own files the user pointed at, such as an MCP server installed under
	// /tmp. Paths that do not exist, or lie inside the workspace or a Writable path, are
	// skipped; Hidden paths still win.
	ReadOnly []string
	// Hidden are absolute paths the command never sees, in every mode: the app's data
	// folder at least. A folder is replaced by an empty read-only one, a file (or
	// socket) by an empty read-only file. Paths that do not exist are skipped. In the
	// confined modes SecretPaths(home) are hidden too.
	Hidden []string
}

// Confined reports whether p confines the filesystem (any mode but full access).
func (p Policy) Confined() bool { return p.mode() != ModeFullAccess }

func (p Policy) mode() Mode {
	if p.Mode == "" {
		return DefaultMode
	}
	return p.Mode
}

// String describes the policy in a few words for results and cards, e.g.
// "workspace-write, no network".
func (p Policy) String() string {
	m := p.mode()
	if m == ModeFullAccess {
		return string(m)
	}
	if p.Network {
		return string(m) + ", network on"
	}
	return string(m) + ", no network"
}

// PolicyError is returned for a policy that cannot be applied as given: a relative or
// missing workspace, an unknown mode, a workspace inside a hidden path.
type PolicyError struct{ Message string }

func (e *PolicyError) Error() string { return e.Message }

// Validate checks the policy's paths and mode. Errors: *PolicyError.
func (p Policy) Validate() error {
	if !p.mode().Valid() {
		return &PolicyError{Message: fmt.Sprintf("unknown sandbox mode %q (read-only, workspace-write or full-access)", p.Mode)}
	}
	if p.Workspace == "" {
		return &PolicyError{Message: "no workspace folder is set"}
	}
	if !filepath.IsAbs(p.Workspace) {
		return &PolicyError{Message: fmt.Sprintf("the workspace %q is not an absolute path", p.Workspace)}
	}
	st, err := os.Stat(p.Workspace)
	if err != nil || !st.IsDir() {
		return &PolicyError{Message: fmt.Sprintf("the workspace folder %s does not exist or is not a folder", p.Workspace)}
	}
	for _, w := range p.Writable {
		if !filepath.IsAbs(w) {
			return &PolicyError{Message: fmt.Sprintf("the writable path %q is not absolute", w)}
		}
	}
	for _, r := range p.ReadOnly {
		if !filepath.IsAbs(r) {
			return &PolicyError{Message: fmt.Sprintf("the read-only path %q is not absolute", r)}
		}
	}
	for _, h := range p.Hidden {
		if !filepath.IsAbs(h) {
			return &PolicyError{Message: fmt.Sprintf("the hidden path %q is not absolute", h)}
		}
	}
	ws := realPath(p.Workspace)
	for _, h := range p.hidden() {
		if hr := realPath(h); within(ws, hr) {
			return &PolicyError{Message: fmt.Sprintf("the workspace %s lies inside %s, which commands never see: choose another workspace", p.Workspace, h)}
		}
	}
	return nil
}

// Hides is every path the policy hides from commands, and from the file tools, which
// follow the same rule: Hidden, plus the secret stores (SecretPaths) and the user's
// runtime folders when the policy confines (not in full access). A workspace inside
// one of them is refused by the file tools (a chat working in ~/.ssh read the private
// key with read_file while the terminal's cat of it asked first).
func (p Policy) Hides() []string { return p.hidden() }

// WorkspaceHidden returns the hidden path (Hides) the policy's workspace is, or lies
// inside, by name or with symbolic links resolved; "" when none. A runtime refuses such
// a workspace before anything runs: its commands would see an emptied folder, and its
// files are what the sandbox keeps from the agent.
func (p Policy) WorkspaceHidden() string {
	ws := strings.TrimSpace(p.Workspace)
	if ws == "" || !filepath.IsAbs(ws) {
		return ""
	}
	rw := realPath(ws)
	for _, h := range p.hidden() {
		if within(filepath.Clean(ws), filepath.Clean(h)) || within(rw, realPath(h)) {
			return h
		}
	}
	return ""
}

// hidden is every path the policy hides: Hidden, plus the secret stores when confined.
func (p Policy) hidden() []string {
	out := slices.Clone(p.Hidden)
	if p.Confined() {
		if home, err := os.UserHomeDir(); err == nil {
			out = append(out, SecretPaths(home)...)
		}
		out = append(out, runtimeDirs()...)
	}
	return out
}

// SecretPaths are the per-user secret stores a confined command never sees, under
// home: SSH and GnuPG keys, cloud and registry credentials, password managers and
// keyrings, browser and mail profiles (cookies, saved passwords), shell histories, and
// the credential files of AI agents and their CLIs (Hermes and its profiles, OpenCode,
// Codex, Claude Code, Gemini CLI, goose, Copilot, llm...). Entries with a "*" (per
// profile) are the matches that exist when it is called.
func SecretPaths(home string) []string {
	rel := []string{
		".ssh", ".gnupg", ".pki", ".password-store", ".netrc", ".git-credentials", ".config/git/credentials",
		".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".oci", ".config/doctl", ".terraform.d",
		".vault-token", ".npmrc", ".yarnrc", ".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml",
		".config/gh", ".config/hub", ".config/glab-cli", ".m2/settings.xml", ".gradle/gradle.properties",
		".local/share/keyrings", ".local/share/kwalletd", ".config/kwalletrc", ".config/keepassxc", ".config/Bitwarden",
		".config/1Password", ".1password", ".config/op",
		".mozilla", ".thunderbird", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
		".config/microsoft-edge", ".config/vivaldi", ".config/opera", ".var/app", "snap/firefox", "snap/chromium",
		".bash_history", ".zsh_history", ".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
		".Xauthority", ".ICEauthority", ".s3cfg", ".boto", ".config/rclone/rclone.conf", ".env",
		// The credential stores of the agents Talaria runs or users run beside it
		// (their API keys and OAuth tokens).
		".hermes/.env", ".hermes/auth.json", ".hermes/profiles/*/.env", ".hermes/profiles/*/auth.json",
		".local/share/opencode/auth.json", ".local/share/opencode/mcp-auth.json",
		".codex/auth.json", ".claude/.credentials.json", ".claude.json",
		".gemini/oauth_creds.json", ".gemini/google_accounts.json", ".gemini/.env", ".qwen/oauth_creds.json",
		".config/goose/secrets.yaml", ".local/share/goose/secrets.yaml", ".config/github-copilot",
		".config/io.datasette.llm/keys.json", ".continue/config.json", ".continue/config.yaml",
		".cursor/mcp.json", ".aider.conf.yml", ".config/openai", ".config/anthropic",
		// macOS.
		"Library/Keychains", "Library/Cookies", "Library/Safari", "Library/Mail", "Library/Messages",
		"Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
		"Library/Application Support/BraveSoftware", "Library/Application Support/Microsoft Edge",
		"Library/Application Support/1Password", "Library/Group Containers",
	}
	out := make([]string, 0, len(rel))
	for _, r := range rel {
		p := filepath.Join(home, filepath.FromSlash(r))
		if strings.Contains(r, "*") {
			// Per-profile stores: each existing match (a missing one needs no hiding).
			matches, _ := filepath.Glob(p)
			out = append(out, matches...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// Env builds a minimal environment for a command: PATH, HOME and LANG from this
// process (on Windows also the few variables every program needs there: SystemRoot,
// COMSPEC, PATHEXT, USERPROFILE, TEMP ...), and nothing else of it (no API keys, no
// D-Bus or display addresses), then extra KEY=VALUE pairs (e.g. the secrets the user
// gave this session), which win.
func Env(extra ...string) []string {
	var env []string
	for _, k := range envKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if _, ok := os.LookupEnv("PATH"); !ok {
		env = append(env, "PATH="+defaultPath)
	}
	return mergeEnv(env, extra)
}

// mergeEnv adds extra KEY=VALUE pairs to base, replacing variables of the same name.
func mergeEnv(base, extra []string) []string {
	if len(extra) == 0 {
		return base
	}
	names := map[string]bool{}
	for _, kv := range extra {
		names[envName(kv)] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if !names[envName(kv)] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

func envName(kv string) string {
	for i := 1; i < len(kv); i++ { // from 1: Windows has variables like "=C:"
		if kv[i] == '=' {
			return kv[:i]
		}
	}
	return kv
}

// EnvOff is the environment variable that, set to "off" in the sidecar's environment,
// makes Check report no sandbox (Linux): every command then asks, as on a system
// without bubblewrap. It is how the fail-closed path is tested end to end, and a way
// out for a user whose bubblewrap misbehaves. It cannot unconfine anything silently.
const EnvOff = "TALARIA_SANDBOX"

// Status says whether confinement is available here.
type Status struct {
	// Available is true when confined policies can run.
	Available bool `json:"available"`
	// Mechanism names what confines commands, e.g. "bubblewrap 0.8.0"; "" when none.
	Mechanism string `json:"mechanism"`
	// Reason says why confinement is unavailable ("" when available).
	Reason string `json:"reason,omitempty"`
	// Hint says what the user can do about it ("" when available).
	Hint string `json:"hint,omitempty"`
}

// UnavailableError is returned by Command for a confined policy when no sandbox can
// run here. Callers ask the user before running the command unconfined (full access):
// never silently.
type UnavailableError struct{ Status Status }

func (e *UnavailableError) Error() string {
	msg := "no sandbox is available to confine commands: " + e.Status.Reason
	if e.Status.Hint != "" {
		msg += " (" + e.Status.Hint + ")"
	}
	return msg
}

// ErrUnavailable matches every *UnavailableError with errors.Is.
var ErrUnavailable = errors.New("sandbox unavailable")

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// realPath resolves symbolic links where it can (the path as given otherwise).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or lies inside it (both clean and absolute).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// Overlaps reports whether a and b are the same path or one contains the other, after
// resolving symbolic links: the test a workspace must fail against the app's data
// folder (in either direction).
func Overlaps(a, b string) bool {
	ra, rb := realPath(a), realPath(b)
	return within(ra, rb) || within(rb, ra) || within(filepath.Clean(a), filepath.Clean(b)) || within(filepath.Clean(b), filepath.Clean(a))
}

// IsUnavailable reports whether err says no sandbox is available (*UnavailableError).
func IsUnavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// ProgramPaths are the folders a confined program needs visible read-only when it was
// installed in a place the sandbox makes private (/tmp, /var/tmp): for the command and
// every absolute argument (and dir) that exists there, the folder directly under that
// place (e.g. /tmp/clone for /tmp/clone/node_modules/x/dist/index.js), so the program's
// own tree (a script's modules beside it) is found. Use the result as Policy.ReadOnly.
// Paths elsewhere are visible anyway and are not returned.
func ProgramPaths(argv []string, dir string) []string {
	roots := []string{"/tmp", realPath("/var/tmp")}
	var out []string
	seen := map[string]bool{}
	for _, a := range append(append([]string{}, argv...), dir) {
		if !filepath.IsAbs(a) {
			continue
		}
		if _, err := os.Stat(a); err != nil {
			continue
		}
		r := realPath(a)
		for _, root := range roots {
			if r == root || !within(r, root) {
				continue
			}
			rel, _ := filepath.Rel(root, r)
			top := filepath.Join(root, strings.SplitN(rel, string(filepath.Separator), 2)[0])
			if !seen[top] {
				seen[top] = true
				out = append(out, top)
			}
		}
	}
	return out
}
