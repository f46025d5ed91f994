package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
)

// Probe is what Test found on a host.
type Probe struct {
	OS   string `json:"os"`   // `uname -s`, e.g. "Linux"
	Arch string `json:"arch"` // `uname -m`, e.g. "x86_64"
	Home string `json:"home"` // the login's $HOME
	// HermesPython is the Python of the host's Hermes Agent ("" when none was found);
	// HermesVersion its hermes-agent package version; HermesHome its HERMES_HOME.
	HermesPython  string `json:"hermes_python"`
	HermesVersion string `json:"hermes_version"`
	HermesHome    string `json:"hermes_home"`
	// Agents are the known ACP agents found on the host's PATH, by id.
	Agents map[string]string `json:"agents"`
	// Bubblewrap says whether bwrap is there (the sandbox of the agent's commands).
	Bubblewrap bool `json:"bubblewrap"`
	// Sidecar is "current" when this version of the sidecar is installed there,
	// "outdated" when another build is, "" when none is.
	Sidecar string `json:"sidecar"`
	// Notes are what Test found wrong, in words for the user (the Hermes path given
	// not found there, a host of another system); empty when nothing is.
	Notes []string `json:"notes"`
}

// Supported reports whether the host runs this build's sidecar: the same system and
// processor as this computer (Talaria copies its own binary).
func (p Probe) Supported() bool {
	return strings.EqualFold(p.OS, runtime.GOOS) && archOf(p.Arch) == runtime.GOARCH
}

func archOf(uname string) string {
	switch uname {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	}
	return uname
}

var versionRe = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,64}$`)

// sidecarDir is the install folder relative to the login's home (ssh starts commands
// there): ~/.cache/talaria/<version>.
func sidecarDir(version string) string {
	if !versionRe.MatchString(version) {
		version = "unknown"
	}
	return ".cache/talaria/" + version
}

// SidecarBinary is talaria-sidecar, the sidecar alone (cmd/talaria-sidecar), built
// without cgo, so it loads none of the window's libraries: what the app starts as its
// agent process and what it copies to remote hosts. It is at exe + "-sidecar" (a build
// folder), at talaria-sidecar.exe beside talaria.exe (Windows), or in ../lib/talaria/
// from exe's folder (an install: scripts/install.sh); exe itself when none is there
// (`wails dev`'s and talaria-drivers' builds link the sidecar in).
func SidecarBinary(exe string) string {
	candidates := []string{exe + "-sidecar"}
	if base, ok := strings.CutSuffix(exe, ".exe"); ok {
		candidates = append(candidates, base+"-sidecar.exe")
	}
	candidates = append(candidates, filepath.Join(filepath.Dir(exe), "..", "lib", "talaria", "talaria-sidecar"))
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0) {
			return filepath.Clean(p)
		}
	}
	return exe
}

// SidecarPath is where the sidecar of version lives on a host, relative to the
// login's home.
func SidecarPath(version string) string { return sidecarDir(version) + "/talaria" }

// shSum256 defines the shell function sum256 FILE: the file's SHA-256 in lowercase
// hex (GNU coreutils' sha256sum, else the BSDs' and macOS's shasum). Every script that
// checks a sum starts with it.
const shSum256 = `sum256() { (sha256sum "$1" 2>/dev/null || shasum -a 256 "$1") | cut -d' ' -f1; }
`

// probeScript prints key=value lines; %[1]s is the quoted sidecar path, %[2]s the
// quoted Hermes override.
const probeScript = shSum256 + `printf 'os=%%s\n' "$(uname -s)"; printf 'arch=%%s\n' "$(uname -m)"; printf 'home=%%s\n' "$HOME"
PATH="$PATH:$HOME/.local/bin:$HOME/bin:/usr/local/bin"
py=; h=%[2]s
case $h in "~") h=$HOME ;; "~/"*) h="$HOME/${h#"~/"}" ;; esac
if [ -z "$h" ] && [ -x "$HOME/.hermes/hermes-agent/venv/bin/python" ]; then py="$HOME/.hermes/hermes-agent/venv/bin/python"; fi
if [ -z "$py" ] && [ -z "$h" ]; then h=$(command -v hermes 2>/dev/null); fi
if [ -z "$py" ] && [ -n "$h" ]; then
  case "${h##*/}" in python*) py=$h ;; *) set -- $(head -n1 "$h" 2>/dev/null | sed -n 's/^#!//p'); if [ "${1##*/}" = env ]; then py=$(command -v "$2" 2>/dev/null); else py=$1; fi ;; esac
fi
if [ -n "$py" ] && v=$("$py" -c 'import importlib.metadata as m, hermes_cli; print(m.version("hermes-agent"))' 2>/dev/null); then printf 'hermes_python=%%s\nhermes_version=%%s\n' "$py" "$v"; fi
printf 'hermes_home=%%s\n' "${HERMES_HOME:-$HOME/.hermes}"
for a in %[3]s; do p=$(command -v "${a#*=}" 2>/dev/null) && printf 'agent=%%s=%%s\n' "${a%%%%=*}" "$p"; done
command -v bwrap >/dev/null 2>&1 && echo bubblewrap=1
f=%[1]s; if [ -f "$f" ]; then printf 'sidecar=%%s\n' "$(sum256 "$f")"; fi
exit 0
`

// Probe reports what h has: its system, Hermes Agent, the agents of agents (id ->
// command) on its PATH, bubblewrap, and whether the sidecar of version with SHA-256
// sum is installed. Errors: *Error.
func (c SSH) Probe(ctx context.Context, h Host, version, sum string, agents map[string]string) (Probe, error) {
	var words []string
	for id, cmd := range agents {
		words = append(words, id+"="+cmd)
	}
	list, err := Quote(words)
	if err != nil {
		return Probe{}, err
	}
	hq, err := Quote([]string{h.Hermes})
	if err != nil {
		return Probe{}, err
	}
	out, err := c.Run(ctx, h, fmt.Sprintf(probeScript, SidecarPath(version), hq, list), nil)
	if err != nil {
		return Probe{}, err
	}
	p := Probe{Agents: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "os":
			p.OS = v
		case "arch":
			p.Arch = v
		case "home":
			p.Home = v
		case "hermes_python":
			p.HermesPython = v
		case "hermes_version":
			p.HermesVersion = v
		case "hermes_home":
			p.HermesHome = v
		case "agent":
			if id, path, ok := strings.Cut(v, "="); ok {
				p.Agents[id] = path
			}
		case "bubblewrap":
			p.Bubblewrap = true
		case "sidecar":
			p.Sidecar = "outdated"
			if v == sum {
				p.Sidecar = "current"
			}
		}
	}
	if p.OS == "" {
		return Probe{}, &Error{Host: h.Name, Code: CodeRemote, Detail: "its shell printed nothing Talaria understands; a login script may print text or use a shell that is not POSIX"}
	}
	return p, nil
}

// installScript writes stdin to the sidecar path through a temporary file, checks its
// sum and moves it into place (atomic: a start never runs a half-written binary).
const installScript = shSum256 + `set -e
d=%[1]s; mkdir -p "$d"; t="$d/.talaria.$$"
trap 'rm -f "$t"' EXIT
cat > "$t"; chmod 755 "$t"
s=$(sum256 "$t")
if [ "$s" != %[2]s ]; then echo "the copied sidecar's checksum is $s, not %[2]s (damaged in transit or the disk is full)" >&2; exit 3; fi
mv -f "$t" "$d/talaria"; trap - EXIT
`

// Install copies the local binary (this app's own) to h as the sidecar of version
// unless probe says that build is there. Errors: *Error (CodeUnsupported when the
// host's system differs from this one's).
func (c SSH) Install(ctx context.Context, h Host, p Probe, binary, version, sum string) error {
	if !p.Supported() {
		return &Error{Host: h.Name, Code: CodeUnsupported,
			Detail: fmt.Sprintf("it runs %s %s; this Talaria's sidecar is built for %s %s", p.OS, p.Arch, runtime.GOOS, runtime.GOARCH)}
	}
	if p.Sidecar == "current" {
		return nil
	}
	f, err := os.Open(binary)
	if err != nil {
		return &Error{Host: h.Name, Code: CodeRemote, Detail: "cannot read this app's own binary to copy it: " + err.Error()}
	}
	defer f.Close()
	_, err = c.Run(ctx, h, fmt.Sprintf(installScript, sidecarDir(version), sum), f)
	return err
}

// fileSums caches the SHA-256 of the local binary by path, size and modification time.
var fileSums sync.Map

// FileSum returns the hex SHA-256 of the file at path. Errors: reading it.
func FileSum(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("%s|%d|%d", path, st.Size(), st.ModTime().UnixNano())
	if v, ok := fileSums.Load(key); ok {
		return v.(string), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	fileSums.Store(key, sum)
	return sum, nil
}
