package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// envKeys are the variables of this process Env keeps.
var envKeys = []string{"PATH", "HOME", "LANG"}

const defaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// bwrapCandidates are where bubblewrap is looked for, system locations first so a bwrap
// earlier on a user-writable PATH is not preferred.
var bwrapCandidates = []string{"/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"}

var (
	probeOnce sync.Once
	probed    Status
	bwrapPath string
)

// Check reports whether confinement is available, probing once per process: it finds
// bwrap and runs it with the same namespaces a real command gets. The reasons it gives:
// bwrap is not installed (install the bubblewrap package); the kernel refuses an
// unprivileged user namespace (as an ordinary user bwrap needs one: Debian's
// kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, and on Ubuntu 23.10+
// an AppArmor profile that lets bwrap use them, which Ubuntu ships as bwrap-userns-restrict);
// or namespaces are refused altogether (a container without CAP_SYS_ADMIN or with a
// seccomp filter on clone). As root bwrap needs no user namespace.
func Check() Status {
	probeOnce.Do(func() { probed, bwrapPath = probe() })
	return probed
}

func findBwrap() string {
	for _, c := range bwrapCandidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return c
		}
	}
	if p, err := exec.LookPath("bwrap"); err == nil && filepath.IsAbs(p) {
		return p
	}
	return ""
}

func probe() (Status, string) {
	if os.Getenv(EnvOff) == "off" {
		return Status{Reason: "confinement is turned off for this run (" + EnvOff + "=off)",
			Hint: "every command asks for your approval; start the app without " + EnvOff + " to confine commands again"}, ""
	}
	path := findBwrap()
	if path == "" {
		return Status{Reason: "bubblewrap (bwrap) is not installed",
			Hint: "install the bubblewrap package (Debian/Ubuntu: sudo apt install bubblewrap; Fedora: sudo dnf install bubblewrap)"}, ""
	}
	mech := "bubblewrap"
	if out, err := exec.Command(path, "--version").Output(); err == nil {
		mech = strings.TrimSpace(string(out)) // "bubblewrap 0.8.0"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(baseArgs(false), "--", "/bin/sh", "-c", "exit 0")
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return Status{Mechanism: mech, Reason: "bubblewrap cannot create a sandbox here: " + msg, Hint: namespaceHint(msg)}, ""
	}
	return Status{Available: true, Mechanism: mech}, path
}

// namespaceHint says what to change for the failures bwrap reports.
func namespaceHint(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "unprivileged_userns_clone") || strings.Contains(m, "no permissions to creating new namespace"):
		return "allow unprivileged user namespaces: sudo sysctl kernel.unprivileged_userns_clone=1 (and user.max_user_namespaces > 0)"
	case strings.Contains(m, "uid map") || strings.Contains(m, "setting up uid map"):
		return "the kernel or AppArmor refuses bwrap a user namespace; on Ubuntu 23.10+ install the apparmor profile for bwrap (apparmor package, profile bwrap-userns-restrict) or allow it with sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0"
	case strings.Contains(m, "operation not permitted"):
		return "namespaces are not permitted here (a container without CAP_SYS_ADMIN or with a seccomp filter on clone); run Talaria outside the container or allow user namespaces in it"
	}
	return "check that bubblewrap works: bwrap --ro-bind / / --unshare-all /bin/true"
}

// baseArgs are the namespaces every confined command gets.
func baseArgs(network bool) []string {
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
	if st, err := os.Stat("/var/tmp"); err == nil && st.IsDir() {
		if r := realPath("/var/tmp"); !within(r, "/tmp") {
			args = append(args, "--tmpfs", r)
		}
	}
	args = append(args, "--unshare-all")
	if network {
		args = append(args, "--share-net")
	}
	return append(args, "--die-with-parent", "--new-session")
}

// runtimeDirs are the system places of sockets a confined command must not reach: the
// per-user runtime folders (keyring, D-Bus session bus, Wayland, PulseAudio, gpg-agent),
// the system D-Bus, systemd's private socket, container engines, smart cards.
func runtimeDirs() []string {
	dirs := []string{"/run/user", "/run/dbus", "/var/run/dbus", "/run/systemd/private", "/run/systemd/userdb",
		"/run/docker.sock", "/var/run/docker.sock", "/run/containerd", "/run/podman", "/run/snapd.socket",
		"/run/snapd-snap.socket", "/run/libvirt", "/run/pcscd", "/run/user-secrets"}
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		dirs = append(dirs, d)
	}
	return dirs
}

// Command returns a command that runs argv (argv[0] looked up in env's PATH) with env
// exactly (nothing else of this process's environment; see Env) in dir ("" means the
// workspace), confined under p. The command runs in its own process group, gets SIGKILL
// when this process dies, and ctx's end kills it and everything it started. Errors:
// *PolicyError for a policy that cannot be applied; *UnavailableError when p is confined
// and no sandbox works here (the caller asks the user, then may run it with
// ModeFullAccess).
func Command(ctx context.Context, p Policy, argv []string, env []string, dir string) (*exec.Cmd, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, &PolicyError{Message: "no command was given"}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if dir == "" {
		dir = p.Workspace
	}
	st := Check()
	var cmd *exec.Cmd
	switch {
	case st.Available:
		// The lifeline: the command's PID namespace gets the read end of a pipe whose
		// write end only this process holds. A watcher beside the command kills every
		// process of the namespace when it reads EOF: when this process dies (however)
		// or Kill closes the write end. It does not depend on PR_SET_PDEATHSIG, which
		// bwrap's --die-with-parent uses and which does not always fire.
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		args := append(bwrapArgs(p, dir), "--", "/bin/sh", "-c", lifelineScript, "sh")
		cmd = exec.CommandContext(ctx, bwrapPath, append(args, argv...)...)
		cmd.ExtraFiles = []*os.File{r}
		lifelines.Store(cmd, [2]*os.File{r, w})
	case p.Confined():
		return nil, &UnavailableError{Status: st}
	default:
		// Full access without bubblewrap: a plain process group, killed with this process.
		path, err := lookPath(argv[0], env)
		if err != nil {
			return nil, err
		}
		cmd = exec.CommandContext(ctx, path, argv[1:]...)
		cmd.Args[0] = argv[0]
		cmd.Dir = dir
	}
	cmd.Env = env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return Kill(cmd) }
	return cmd, nil
}

// lifelineScript runs the command ("$@") with a watcher beside it: when fd 3 (the
// lifeline) reads EOF, the watcher kills every process of the PID namespace (kill -1
// reaches only the namespace's own processes, and never its init, bwrap, which exits
// when the command does). The command itself does not get fd 3.
const lifelineScript = `(read -r _ <&3; kill -KILL -1) >/dev/null 2>&1 & exec "$@" 3<&-`

// lifelines holds the pipe ends of each bwrap command until Kill closes them.
var lifelines sync.Map // *exec.Cmd -> [2]*os.File{read end, write end}

// Kill ends a command and everything it started: under bubblewrap it closes the
// command's lifeline (the watcher in its PID namespace kills every process there) and
// SIGKILLs the process group of bwrap, which ends the namespace. Call it when the
// command is done with (it also releases the lifeline). A command that was not started,
// or is gone, is no error.
func Kill(cmd *exec.Cmd) error {
	if cmd == nil {
		return nil
	}
	if v, ok := lifelines.LoadAndDelete(cmd); ok {
		ends := v.([2]*os.File)
		ends[1].Close()
		ends[0].Close()
	}
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil
	}
	return err
}

// lookPath finds a program in env's PATH (not this process's).
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		f := filepath.Join(d, name)
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return f, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH", name)
}

// bwrapArgs are bubblewrap's options for p, before "--" and the command.
func bwrapArgs(p Policy, dir string) []string {
	var args []string
	var bound []string
	if p.Confined() {
		args = baseArgs(p.Network)
		ws := realPath(p.Workspace)
		var rw []string // bound read-write after the read-only paths, so they win inside them
		if p.mode() == ModeWorkspaceWrite {
			rw = append(rw, ws)
			for _, w := range p.Writable {
				if _, err := os.Stat(w); err == nil {
					rw = append(rw, realPath(w))
				}
			}
		}
		for _, ro := range p.ReadOnly {
			if _, err := os.Stat(ro); err != nil {
				continue
			}
			r := realPath(ro)
			inside := within(r, ws)
			for _, w := range rw {
				inside = inside || within(r, w)
			}
			if !inside {
				args = append(args, "--ro-bind", r, r)
				bound = append(bound, r)
			}
		}
		if p.mode() == ModeWorkspaceWrite {
			for _, w := range rw {
				args = append(args, "--bind", w, w)
				bound = append(bound, w)
			}
		} else {
			args = append(args, "--ro-bind", ws, ws)
			bound = append(bound, ws)
		}
	} else {
		// Full access: the real filesystem and devices, the network; its own PID
		// namespace so nothing outlives the command.
		args = []string{"--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
			"--unshare-pid", "--die-with-parent", "--new-session"}
	}
	args = append(args, hideArgs(p.hidden(), bound, p.Confined())...)
	return append(args, "--chdir", dir)
}

// hideArgs mount an empty read-only folder over each hidden folder and an empty
// read-only file over each hidden file or socket. Paths that do not exist are skipped
// (bwrap would create a mount point for them), and so are paths inside another hidden
// one, and, when confined, paths inside the private /tmp unless a bound path brings
// them back.
func hideArgs(hidden, bound []string, confined bool) []string {
	type item struct {
		path string
		dir  bool
	}
	var items []item
	seen := map[string]bool{}
	for _, h := range hidden {
		r := realPath(h)
		if seen[r] {
			continue
		}
		st, err := os.Lstat(r)
		if err != nil {
			continue
		}
		if confined && (within(r, "/tmp") || within(r, realPath("/var/tmp"))) {
			inBound := false
			for _, b := range bound {
				if within(r, b) {
					inBound = true
				}
			}
			if !inBound {
				continue
			}
		}
		seen[r] = true
		items = append(items, item{path: r, dir: st.IsDir()})
	}
	var args []string
	for _, it := range items {
		nested := false
		for _, o := range items {
			if o.dir && o.path != it.path && within(it.path, o.path) {
				nested = true
			}
		}
		if nested {
			continue
		}
		if it.dir {
			args = append(args, "--tmpfs", it.path, "--remount-ro", it.path)
		} else {
			args = append(args, "--ro-bind", "/dev/null", it.path)
		}
	}
	return args
}
