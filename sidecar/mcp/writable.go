package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// WritableFolders are the folders a stdio server may write under the sandbox beside the
// workspace, in order, without duplicates: its own package folder (for the command and
// every absolute argument that is a script, resolved through symbolic links, the
// nearest folder at most three levels up holding package.json, pyproject.toml,
// setup.py or setup.cfg: e.g. .../node_modules/@modelcontextprotocol/server-memory for
// its dist/index.js, where it keeps memory.jsonl), its working folder cwd when the user
// set one, then extra (the server's own writable_paths setting). Folders that do not
// exist, the home folder or one above it, the root and system folders (/usr, /etc,
// /opt ...) are never returned, nor a node_modules or site-packages folder itself;
// extra paths are only checked to exist (the user named them).
func WritableFolders(argv []string, cwd string, extra []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(dir string) {
		if dir != "" && !seen[dir] {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	for _, a := range argv {
		if root := packageRoot(a); root != "" && grantable(root) {
			add(root)
		}
	}
	if cwd != "" && filepath.IsAbs(cwd) {
		if r, err := filepath.EvalSymlinks(cwd); err == nil && grantable(r) {
			add(r)
		}
	}
	for _, e := range extra {
		if _, err := os.Stat(e); err == nil && filepath.IsAbs(e) {
			add(filepath.Clean(e))
		}
	}
	return out
}

// packageRoot is the package folder of the script at path a, or "".
func packageRoot(a string) string {
	if !filepath.IsAbs(a) {
		return ""
	}
	real, err := filepath.EvalSymlinks(a)
	if err != nil {
		return ""
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() || !isScript(real) {
		return ""
	}
	dir := filepath.Dir(real)
	for range 3 {
		switch filepath.Base(dir) {
		case "node_modules", "site-packages", "dist-packages":
			return ""
		}
		for _, m := range packageMarkers {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
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

// grantable reports whether a server may be given dir to write: not the root, a system
// folder, the home folder or a folder above it.
func grantable(dir string) bool {
	if dir == "/" || dir == "." {
		return false
	}
	for _, p := range systemPrefixes {
		if dir == p || strings.HasPrefix(dir, p+"/") {
			return false
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		}
		if rel, err := filepath.Rel(dir, home); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return false
		}
	}
	return true
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
// that runs in the sandbox. A refusal inside npx's or uvx's cache says to install the
// server and run it directly (a launcher's cache is theirs, not the server's).
func RefusalHint(server string, r Refusal) string {
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
	return fmt.Sprintf("The sandbox refused the MCP server %s to write %s (%s): a sandboxed server may change only the chat's workspace and its own folder. "+
		"To allow it, add %s to the server's \"Writable folders\" in Settings → MCP servers (or choose \"no sandbox\" for the server if you trust it); "+
		"a chat in read-only mode lets no server write.", server, r.Path, r.Reason, folder)
}
