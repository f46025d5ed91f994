//go:build linux

// Package sshtest starts a real OpenSSH server (Debian's openssh-server, installed by
// scripts/setup.sh) on a loopback port for the tests of remote runtimes: its own host
// key, one client key allowed, logins only as the user running the tests, and each
// login's HOME set to a folder of the test's own (sshd's ForceCommand), so nothing is
// written to the real home. Logins start in / rather than at home, as a login script
// that changes folder leaves them: Talaria's commands must not depend on where they
// start. The "remote host" is this machine.
//
// Imported by tests only; it holds no product code.
package sshtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"talaria/backend/remote"
	"talaria/internal/testproc"
)

// Server is a running sshd.
type Server struct {
	Port int
	// Home is the HOME of every login (the remote host's home folder).
	Home string
	// SSH runs the client against this server only: no user configuration, its own
	// known_hosts holding the server's key.
	SSH remote.SSH
	// Identity is the client's private key file.
	Identity string
	// KnownHosts is the client's known_hosts file.
	KnownHosts string

	dir    string
	sshd   string
	config string
	ln     net.Listener
	mu     sync.Mutex
	stderr bytes.Buffer
	conns  []*exec.Cmd // the sshd serving each connection
	done   chan struct{}
}

// Host returns a remote.Host named name that reaches the server.
func (s *Server) Host(name string) remote.Host {
	return remote.Host{Name: name, Target: currentUser() + "@127.0.0.1", Port: s.Port, IdentityFile: s.Identity}
}

// Log returns what sshd wrote so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

type lockedWriter struct{ s *Server }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.stderr.Write(p)
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// Start starts a server for t, stopped when t ends (a missing sshd fails t: make
// setup installs it).
func Start(t testing.TB) *Server {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshd); err != nil {
		t.Fatalf("sshd is not installed: run make setup (it installs openssh-server)")
	}
	dir := t.TempDir()
	s := &Server{dir: dir, Home: filepath.Join(dir, "home"), Identity: filepath.Join(dir, "id_ed25519"),
		KnownHosts: filepath.Join(dir, "known_hosts"), done: make(chan struct{})}
	if err := os.MkdirAll(s.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	keygen := func(path string) {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "talaria-test", "-f", path).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	keygen(hostKey)
	keygen(s.Identity)
	pub, err := os.ReadFile(s.Identity + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// sshd run by root separates privileges into this (empty, root-owned) folder.
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	config := fmt.Sprintf(`HostKey %[1]s/host_ed25519
AuthorizedKeysFile %[1]s/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AllowUsers %[2]s
PermitRootLogin prohibit-password
AllowTcpForwarding no
X11Forwarding no
PrintMotd no
LogLevel VERBOSE
ForceCommand HOME=%[3]s; export HOME; cd / || exit 1; exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"
`, dir, currentUser(), s.Home)
	cfgPath := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	s.sshd, s.config = sshd, cfgPath
	// This test listens on a port the kernel picks, and each connection is served by
	// its own `sshd -i` (inetd mode: the connection is its stdin and stdout).
	s.ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = s.ln.Addr().(*net.TCPAddr).Port
	go s.serve()
	t.Cleanup(s.stop)
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(hostPub))
	known := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", s.Port, fields[0], fields[1])
	if err := os.WriteFile(s.KnownHosts, []byte(known), 0o600); err != nil {
		t.Fatal(err)
	}
	s.SSH = remote.SSH{Options: []string{"-F", "/dev/null", "-o", "UserKnownHostsFile=" + s.KnownHosts,
		"-o", "GlobalKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=yes", "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR"}}
	return s
}

func (s *Server) serve() {
	defer close(s.done)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		f, err := c.(*net.TCPConn).File()
		c.Close()
		if err != nil {
			continue
		}
		// -i: serve one connection on stdin/stdout; -e: log to stderr.
		cmd := exec.Command(s.sshd, "-i", "-e", "-f", s.config)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = f, f, lockedWriter{s}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err == nil {
			s.mu.Lock()
			s.conns = append(s.conns, cmd)
			s.mu.Unlock()
			go func() { _ = cmd.Wait() }()
		}
		f.Close()
	}
}

// DropConnections ends every ssh connection the server serves by killing its sshd
// processes, as a network drop would end them: what the sessions run sees its
// stdin, stdout and stderr end, and is not killed. New connections are served.
func (s *Server) DropConnections() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, cmd := range conns {
		killTree(cmd.Process.Pid)
	}
}

// killTree kills the sshd processes among pid's descendants, then pid.
func killTree(pid int) {
	for _, child := range testproc.ChildrenOf(pid) {
		if (testproc.Process{PID: child}).Comm() == "sshd" {
			killTree(child)
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// Close stops the server: new connections are refused (an unreachable host) and the
// ones open are dropped.
func (s *Server) Close() { s.stop() }

func (s *Server) stop() {
	s.ln.Close()
	<-s.done
	s.DropConnections()
	s.killDaemons()
}

// killDaemons kills what the logins left running (a sidecar daemon that outlives its
// connection, package sidecar/link): the processes whose HOME is this server's.
func (s *Server) killDaemons() {
	for _, pid := range testproc.Find(func(p testproc.Process) bool { home, _ := p.Env("HOME"); return home == s.Home }) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
