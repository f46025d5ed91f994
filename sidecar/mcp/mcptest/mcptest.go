//go:build linux

// Package mcptest finds the real MCP servers the tests run (installed from npm by
// scripts/mcp-setup.sh into .cache/mcp-servers; it runs that script itself when they
// are missing) and starts server-everything's streamable HTTP mode. Helpers take a
// testing.TB-shaped interface; its waits end at the tests' one deadline
// (internal/testwait.Timeout).
package mcptest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"talaria/internal/testproc"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
)

// The pinned versions (scripts/mcp-servers/package.json).
const (
	FilesystemVersion = "2026.8.31"
	EverythingVersion = "2026.8.31"
	MemoryVersion     = "2026.8.31"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
	Logf(format string, args ...any)
	Failed() bool
}

// Servers are the installed servers' entry points.
type Servers struct {
	Node       string // the node binary
	Filesystem string // server-filesystem's dist/index.js
	Everything string // server-everything's dist/index.js
	Memory     string // server-memory's dist/index.js
}

var (
	once    sync.Once
	found   Servers
	findErr error
)

// Find returns the installed servers, installing them first when missing (npm, about
// 10 s; the result is shared by the process). It fails the test when that fails.
func Find(t TB) Servers {
	t.Helper()
	once.Do(func() { found, findErr = find() })
	if findErr != nil {
		t.Fatalf("the test MCP servers are not installed and could not be: %v (run scripts/mcp-setup.sh)", findErr)
	}
	return found
}

func find() (Servers, error) {
	root, err := repoRoot()
	if err != nil {
		return Servers{}, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return Servers{}, fmt.Errorf("node is not installed: %w", err)
	}
	s := Servers{Node: node,
		Filesystem: filepath.Join(root, ".cache/mcp-servers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
		Everything: filepath.Join(root, ".cache/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
		Memory:     filepath.Join(root, ".cache/mcp-servers/node_modules/@modelcontextprotocol/server-memory/dist/index.js")}
	if missing(s) {
		cmd := exec.Command(filepath.Join(root, "scripts/mcp-setup.sh"))
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return Servers{}, fmt.Errorf("scripts/mcp-setup.sh: %v\n%s", err, out)
		}
		if missing(s) {
			return Servers{}, errors.New("scripts/mcp-setup.sh ran but the servers are still missing")
		}
	}
	return s, nil
}

func missing(s Servers) bool {
	for _, p := range []string{s.Filesystem, s.Everything, s.Memory} {
		if _, err := os.Stat(p); err != nil {
			return true
		}
	}
	return false
}

// repoRoot is the folder holding go.mod, from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "mcp-setup.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the repository root (with scripts/mcp-setup.sh) is not above the working directory")
		}
		dir = parent
	}
}

// FilesystemServer is a stdio server setting for server-filesystem allowing dirs.
func (s Servers) FilesystemServer(name string, dirs ...string) protocol.MCPServer {
	return protocol.MCPServer{Name: name, Transport: protocol.MCPTransportStdio, Command: s.Node, Args: append([]string{s.Filesystem}, dirs...)}
}

// EverythingServer is a stdio server setting for server-everything. Its last argument
// is a marker unique to this call (the server ignores it), so Marker and PidsOf find
// its processes and no other test's.
func (s Servers) EverythingServer(name string) protocol.MCPServer {
	return protocol.MCPServer{Name: name, Transport: protocol.MCPTransportStdio, Command: s.Node,
		Args: []string{s.Everything, "stdio", fmt.Sprintf("talaria-test-%d-%d", os.Getpid(), markers.Add(1))}}
}

var markers atomic.Int64

// MemoryServer is a stdio server setting for a private copy of server-memory made in
// parent (its package folder copied, its dependencies linked to the installed ones),
// so its state is the test's own: it keeps memory.jsonl beside its dist/index.js, the
// returned path.
func (s Servers) MemoryServer(t TB, name, parent string) (protocol.MCPServer, string) {
	t.Helper()
	installed := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(s.Memory)))) // .../node_modules
	nm := filepath.Join(parent, "node_modules")
	entries, err := os.ReadDir(installed)
	if err != nil {
		t.Fatalf("read %s: %v", installed, err)
	}
	scoped := filepath.Join(nm, "@modelcontextprotocol")
	if err := os.MkdirAll(scoped, 0o755); err != nil {
		t.Fatalf("%v", err)
	}
	for _, e := range entries {
		if e.Name() != "@modelcontextprotocol" {
			if err := os.Symlink(filepath.Join(installed, e.Name()), filepath.Join(nm, e.Name())); err != nil {
				t.Fatalf("%v", err)
			}
		}
	}
	inScope, _ := os.ReadDir(filepath.Join(installed, "@modelcontextprotocol"))
	for _, e := range inScope {
		if e.Name() != "server-memory" {
			if err := os.Symlink(filepath.Join(installed, "@modelcontextprotocol", e.Name()), filepath.Join(scoped, e.Name())); err != nil {
				t.Fatalf("%v", err)
			}
		}
	}
	pkg := filepath.Join(scoped, "server-memory")
	if out, err := exec.Command("cp", "-R", filepath.Dir(filepath.Dir(s.Memory)), pkg).CombinedOutput(); err != nil {
		t.Fatalf("copy server-memory: %v %s", err, out)
	}
	_ = os.Remove(filepath.Join(pkg, "dist", "memory.jsonl"))
	index := filepath.Join(pkg, "dist", "index.js")
	return protocol.MCPServer{Name: name, Transport: protocol.MCPTransportStdio, Command: s.Node, Args: []string{index}},
		filepath.Join(pkg, "dist", "memory.jsonl")
}

// Marker is the unique marker argument of a setting made by EverythingServer.
func Marker(cfg protocol.MCPServer) string { return cfg.Args[len(cfg.Args)-1] }

// HTTPServer is a running server-everything in streamable HTTP mode.
type HTTPServer struct {
	URL string // its MCP endpoint, http://127.0.0.1:<port>/mcp
	cmd *exec.Cmd

	mu     sync.Mutex
	stderr []string // its last stderr lines (at most 40), logged when the test failed
	exited error    // set when it ended before Stop
	done   chan struct{}
}

// StartEverythingHTTP starts server-everything's streamable HTTP mode on a port the
// kernel picks (PORT=0) and waits until it listens, reading the port from its listening
// socket (Linux /proc). A port chosen here and handed over would race with every other
// process on the machine: the server's Express 5 prints "listening" even when the port
// was taken meanwhile, then exits. It is stopped at the test's end.
func (s Servers) StartEverythingHTTP(t TB) *HTTPServer {
	t.Helper()
	for attempt := 0; attempt < 5; attempt++ {
		cmd := exec.Command(s.Node, s.Everything, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT=0")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		stderr, _ := cmd.StderrPipe()
		cmd.Stdout = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatalf("start server-everything: %v", err)
		}
		h := &HTTPServer{cmd: cmd, done: make(chan struct{})}
		ready := make(chan error, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			said := false
			for sc.Scan() {
				line := sc.Text()
				h.mu.Lock()
				h.stderr = append(h.stderr, line)
				if len(h.stderr) > 40 {
					h.stderr = h.stderr[1:]
				}
				h.mu.Unlock()
				switch {
				case said:
				case strings.Contains(line, "listening on port"):
					said = true
					port, err := testproc.ListenPort(cmd.Process.Pid)
					if err == nil {
						h.URL = fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
					}
					ready <- err
				case strings.Contains(line, "already in use"):
					said = true
					ready <- errors.New(line)
				}
			}
			werr := cmd.Wait()
			h.mu.Lock()
			h.exited = fmt.Errorf("server-everything ended: %v", werr)
			h.mu.Unlock()
			close(h.done)
			if !said {
				ready <- errors.New("server-everything exited before listening")
			}
		}()
		var werr error
		select {
		case werr = <-ready:
		case <-time.After(testwait.Timeout):
			werr = fmt.Errorf("server-everything did not listen within %v", testwait.Timeout)
		}
		if werr != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-h.done
			t.Logf("server-everything http attempt %d: %v", attempt+1, werr)
			continue
		}
		t.Cleanup(func() {
			if t.Failed() {
				h.mu.Lock()
				t.Logf("server-everything (%s): exited before the test's end: %v; its last stderr lines:\n%s",
					h.URL, h.exited, strings.Join(h.stderr, "\n"))
				h.mu.Unlock()
			}
			h.Stop()
		})
		return h
	}
	t.Fatalf("server-everything in streamable HTTP mode did not start")
	return nil
}

// Stop kills the server.
func (h *HTTPServer) Stop() {
	if h.cmd.Process != nil {
		_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
		<-h.done
	}
}

// PidsOf returns the pids of live processes whose command line contains every part
// (Linux /proc), for tests that check no server outlives its owner.
func PidsOf(parts ...string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue // a zombie is gone already
			}
		}
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		all := true
		for _, p := range parts {
			if !strings.Contains(cmdline, p) {
				all = false
				break
			}
		}
		if all {
			out = append(out, pid)
		}
	}
	return out
}

// WaitGone waits until no process matches parts, up to d; it returns the ones left.
func WaitGone(ctx context.Context, d time.Duration, parts ...string) []int {
	deadline := time.Now().Add(d)
	for {
		left := PidsOf(parts...)
		if len(left) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NodePids returns the pids of node processes whose command line holds marker (the
// server itself, not the bubblewrap process that confines it).
func NodePids(marker string) []int {
	var out []int
	for _, pid := range PidsOf(marker) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			continue
		}
		argv0, _, _ := strings.Cut(string(b), "\x00")
		if filepath.Base(argv0) == "node" {
			out = append(out, pid)
		}
	}
	return out
}
