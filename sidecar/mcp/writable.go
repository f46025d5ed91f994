package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A confined stdio server may change the workspace (in the chat's workspace-write mode)
// and, beside it, its own state folder: the folders WritableFolders returns, which the
// scope's Launch binds read-write. docs/sandbox.md, "MCP servers".

// packageMarkers are the files that mark the root of a program's own package.
var packageMarkers = []string{"package.json", "pyproject.toml", "setup.py", "setup.cfg"}

// systemPrefixes are folders a server is never given to write, whatever it runs from.
var systemPrefixes = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot", "/proc",
	"/sys", "/dev", "/run", "/var/lib", "/snap", "/nix", "/opt"}

// Withheld is a folder WritableFolders found for a server (its package folder, its
// working folder) but did not make writable, and why: e.g. "it is a git repository
// (it holds .git) ...". The user can still allow it in the server's writable_paths.
type Withheld struct {
	Path   string
	Reason string
}

// Message says which folder the sandbox keeps read-only for server, why, and how to
// allow it (logged as a warning when the server starts).
func (w Withheld) Message(server string) string {
	return fmt.Sprintf("%s is not writable for the sandboxed MCP server %s: %s. If the server must change it, add it to the server's \"Writable folders\" in Settings → MCP servers (or choose \"no sandbox\" for the server if you trust it).",
		w.Path, server, w.Reason)
}

// WritableFolders are the folders a stdio server may write under the sandbox beside the
// workspace, in order, without duplicates, and the folders it found but withheld:
//
//   - its own package folder: for the command and every absolute argument that is a
//     script, resolved through symbolic links, the nearest folder at most three levels
//     up holding package.json, pyproject.toml, setup.py or setup.cfg: e.g.
//     .../node_modules/@modelcontextprotocol/server-memory for its dist/index.js, where
//     it keeps memory.jsonl. The climb stops (nothing granted) at a node_modules,
//     site-packages or dist-packages folder, at a folder named bin or Scripts (a
//     program's folder, e.g. ~/code/tool/.venv/bin, is not its project; only a
//     package installed in node_modules is climbed past its bin), and at a
//     Python virtual environment (a folder holding pyvenv.cfg, withheld: its programs,
//     activate scripts and site-packages also run outside the sandbox);
//   - its working folder cwd when the user set one, only when it lies inside the chat's
//     workspace or a package folder granted above (otherwise withheld);
//   - extra (the server's own writable_paths setting), only checked to exist and be
//     absolute: the user named them.
//
// A package or working folder is withheld when it is the root, a system folder (/usr,
// /etc, /opt ...), the home folder or one above it, a hidden folder directly in the
// home folder (~/.config, ~/.local, ~/.ssh ...) or a git repository (it holds .git):
// a server that could write one could get code run outside the sandbox (git hooks,
// shell and editor settings). Folders that do not exist are skipped.
func WritableFolders(argv []string, cwd, workspace string, extra []string) (folders []string, withheld []Withheld) {
	seen := map[string]bool{}
	add := func(dir string) {
		if dir != "" && !seen[dir] {
			seen[dir] = true
			folders = append(folders, dir)
		}
	}
	held := map[string]bool{}
	withhold := func(dir, reason string) {
		if dir != "" && !held[dir] {
			held[dir] = true
			withheld = append(withheld, Withheld{Path: dir, Reason: reason})
		}
	}
	var roots []string
	for _, a := range argv {
		root, venv := packageRoot(a)
		if venv != "" {
			withhold(venv, "it is a Python virtual environment (it holds pyvenv.cfg), whose programs, activate scripts and site-packages also run outside the sandbox")
		}
		if root == "" {
			continue
		}
		if why := notGrantable(root); why != "" {
			withhold(root, why)
			continue
		}
		roots = append(roots, root)
		add(root)
	}
	if cwd != "" && filepath.IsAbs(cwd) {
		if r, err := filepath.EvalSymlinks(cwd); err == nil {
			inside := slices.ContainsFunc(roots, func(root string) bool { return within(r, root) })
			if ws, err := filepath.EvalSymlinks(workspace); workspace != "" && err == nil && within(r, ws) {
				inside = true
			}
			switch why := notGrantable(r); {
			case !inside:
				withhold(r, "it is the server's working folder, which is writable only when it lies inside the chat's workspace or the server's own folder")
			case why == "":
				add(r)
			}
			// Inside but not grantable itself (e.g. the workspace is a repository):
			// not added; the workspace's or own folder's binding decides.
		}
	}
	for _, e := range extra {
		if _, err := os.Stat(e); err == nil && filepath.IsAbs(e) {
			add(filepath.Clean(e))
		}
	}
	return folders, withheld
}

// within reports whether path is dir or lies inside it (both cleaned, absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// packageRoot is the package folder of the script at path a, or "". venv is the Python
// virtual environment (the folder holding pyvenv.cfg) that stopped the climb, or "".
func packageRoot(a string) (root, venv string) {
	if !filepath.IsAbs(a) {
		return "", ""
	}
	real, err := filepath.EvalSymlinks(a)
	if err != nil {
		return "", ""
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() || !isScript(real) {
		return "", ""
	}
	dir := filepath.Dir(real)
	for range 3 {
		base := filepath.Base(dir)
		switch base {
		case "node_modules", "site-packages", "dist-packages":
			return "", ""
		}
		if isVenv(dir) {
			return "", dir
		}
		for _, m := range packageMarkers {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				return dir, ""
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		if base == "bin" || base == "Scripts" {
			// A program's folder (a venv's bin, a project's bin): never its project,
			// unless the folder above is a package npm installed (node_modules/x/bin).
			if isVenv(parent) {
				return "", parent
			}
			if !installedPackage(parent) {
				return "", ""
			}
		}
		dir = parent
	}
	return "", ""
}

// installedPackage reports whether dir is a package folder directly in a node_modules
// folder (node_modules/x or node_modules/@scope/x).
func installedPackage(dir string) bool {
	up := filepath.Dir(dir)
	if strings.HasPrefix(filepath.Base(up), "@") {
		up = filepath.Dir(up)
	}
	return filepath.Base(up) == "node_modules"
}

// isVenv reports whether dir is a Python virtual environment (it holds pyvenv.cfg).
func isVenv(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "pyvenv.cfg"))
	return err == nil
}

// isScript reports whether the file is a script (by its name or a #! line), not a
// compiled program such as the interpreter itself.
func isScript(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".py":
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2]byte
	n, _ := f.Read(b[:])
	return n == 2 && string(b[:]) == "#!"
}

// notGrantable says why a server may not be given dir to write ("" when it may): the
// root, a system folder, the home folder or a folder above it, a hidden folder directly
// in the home folder (~/.config, ~/.local, ~/.ssh ...: other programs' settings), or a
// git repository (its hooks and config run outside the sandbox).
func notGrantable(dir string) string {
	if dir == "/" || dir == "." {
		return "it is the root folder"
	}
	for _, p := range systemPrefixes {
		if dir == p || strings.HasPrefix(dir, p+"/") {
			return "it is a system folder"
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		}
		if within(home, dir) {
			return "it is your home folder or holds it"
		}
		if filepath.Dir(dir) == home && strings.HasPrefix(filepath.Base(dir), ".") {
			return "it is a settings folder directly in your home folder, where other programs keep their settings"
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return "it is a git repository (it holds .git), whose hooks and settings run outside the sandbox"
	}
	return ""
}

// Refusal is a write a server reported refused: the path and why ("read-only file
// system", "permission denied").
type Refusal struct {
	Path   string
	Reason string
}

var refusalPatterns = []*regexp.Regexp{
	// Node: EROFS: read-only file system, open '/x/memory.jsonl' (also mkdir, rename 'a' -> 'b' ...).
	regexp.MustCompile(`(EROFS|EACCES|EPERM): ([a-z -]+), [a-z]+ '([^']+)'`),
	// Python: [Errno 30] Read-only file system: '/x'
	regexp.MustCompile(`\[Errno (30|13|1)\] ([A-Za-z -]+): '([^']+)'`),
	// C programs and shells: /x: Read-only file system; cannot create /x: Permission denied
	regexp.MustCompile(`(^|[\s'"])(/[^\s:'"]+): (Read-only file system|Permission denied)`),
}

// FindRefusal finds the first refused write a server's message or output names: Node's
// "EROFS: read-only file system, open '/p'" (and EACCES, EPERM), Python's "[Errno 30]
// Read-only file system: '/p'" (and 13, 1), and "/p: Read-only file system" or
// "/p: Permission denied" of other programs. ok is false when there is none.
func FindRefusal(text string) (r Refusal, ok bool) {
	for i, re := range refusalPatterns {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		switch i {
		case 0, 1:
			return Refusal{Path: m[3], Reason: strings.ToLower(m[2])}, true
		default:
			return Refusal{Path: m[2], Reason: strings.ToLower(m[3])}, true
		}
	}
	return Refusal{}, false
}

// packageCaches are the caches (under the home folder) of the launchers that fetch a
// server at each start: npx's and uv's (uvx).
var packageCaches = []string{".npm", ".cache/uv", ".local/share/uv"}

// RefusalHint says which path server was refused and how to allow it, for a server
// that runs in the sandbox; cwd is the server's working folder setting ("" when unset).
// A refusal inside npx's or uvx's cache says to install the server and run it directly
// (a launcher's cache is theirs, not the server's); one inside the working folder says
// that a working folder is writable only inside the chat's workspace or the server's
// own folder (WritableFolders).
func RefusalHint(server, cwd string, r Refusal) string {
	folder := r.Path
	if st, err := os.Stat(r.Path); err != nil || !st.IsDir() {
		folder = filepath.Dir(r.Path)
	}
	if home, err := os.UserHomeDir(); err == nil {
		for _, c := range packageCaches {
			cache := filepath.Join(home, c)
			if rel, err := filepath.Rel(cache, r.Path); err == nil && filepath.IsLocal(rel) {
				return fmt.Sprintf("The sandbox refused the MCP server %s to write %s (%s), in the cache of the launcher that fetches it (npx or uvx), which the sandbox keeps read-only (and without network it cannot fetch). "+
					"Install the server and run its program directly (e.g. npm install it into a folder, then node .../dist/index.js; its own folder is then writable), "+
					"or add %s to the server's \"Writable folders\" in Settings → MCP servers and let it use the network (or choose \"no sandbox\" if you trust it).", server, r.Path, r.Reason, cache)
			}
		}
	}
	where := "a sandboxed server may change only the chat's workspace and its own folder"
	if cwd != "" && filepath.IsAbs(cwd) && (within(r.Path, filepath.Clean(cwd)) || within(r.Path, realPath(cwd))) {
		where = fmt.Sprintf("its working folder %s is writable only when it lies inside the chat's workspace or the server's own folder, and a sandboxed server may change only those", cwd)
	}
	return fmt.Sprintf("The sandbox refused the MCP server %s to write %s (%s): %s. "+
		"To allow it, add %s to the server's \"Writable folders\" in Settings → MCP servers (or choose \"no sandbox\" for the server if you trust it); "+
		"a chat in read-only mode lets no server write.", server, r.Path, r.Reason, where, folder)
}

// realPath is path resolved through symbolic links, or path cleaned when it cannot be.
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}
