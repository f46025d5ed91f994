//go:build linux

package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/mcp"
	"talaria/sidecar/mcp/mcptest"
	"talaria/sidecar/protocol"
)

func newManager(t *testing.T) *mcp.Manager {
	m := mcp.NewManager(mcp.Options{ClientVersion: "test"})
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func text(r mcp.Result) string { return r.Text }

// stdinTap is a script node preloads (NODE_OPTIONS=--require) into a stdio server: from
// the moment the server listens on its stdin, every chunk it reads is appended to
// $TALARIA_TEST_MCP_STDIN, so a test sees a request reach the server (the chunk goes to
// the server's own listener in the same event; ours is removed with the server's).
const stdinTap = `const fs = require('fs');
const log = process.env.TALARIA_TEST_MCP_STDIN;
const tap = (d) => fs.appendFileSync(log, d);
let tapped = false;
process.stdin.on('newListener', (ev) => {
  if (ev !== 'data' || tapped) return;
  tapped = true;
  process.stdin.on('data', tap);
});
process.stdin.on('removeListener', (ev, fn) => {
  if (ev === 'data' && fn !== tap && process.stdin.listenerCount('data') === 1) process.stdin.off('data', tap);
});
`

// tappedScope is a scope whose stdio servers get stdinTap; the returned function
// reports whether the server has read s on its stdin.
func tappedScope(t *testing.T, key string) (mcp.Scope, func(s string) bool) {
	t.Helper()
	dir := t.TempDir()
	script, log := filepath.Join(dir, "tap.cjs"), filepath.Join(dir, "stdin.log")
	if err := os.WriteFile(script, []byte(stdinTap), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(extra ...string) []string {
		return mcp.MinimalEnv(append(extra, "NODE_OPTIONS=--require="+script, "TALARIA_TEST_MCP_STDIN="+log)...)
	}
	read := func(s string) bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), s)
	}
	return mcp.Scope{Key: key, Env: env}, read
}

func TestFilesystemServerListsAndRefuses(t *testing.T) {
	srv := mcptest.Find(t)
	allowed := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(allowed, "hello.txt"), []byte("hello from the allowed folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("never read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t)
	ctx := context.Background()
	c, err := m.Get(ctx, srv.FilesystemServer("fs", allowed), mcp.Scope{Key: "t", Workspace: allowed})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Name] = true
		if tl.Name == "read_text_file" {
			if a := mcp.Annotations(tl); !a.ReadOnly || a.Destructive {
				t.Errorf("read_text_file annotations = %+v", a)
			}
		}
	}
	for _, want := range []string{"list_directory", "read_text_file", "write_file"} {
		if !names[want] {
			t.Fatalf("tools %v lack %s", names, want)
		}
	}
	res, err := c.Call(ctx, "list_directory", map[string]any{"path": allowed})
	if err != nil {
		t.Fatal(err)
	}
	if r := mcp.ConvertResult("fs", "list_directory", res); r.Card.IsError || !strings.Contains(text(r), "[FILE] hello.txt") {
		t.Fatalf("list_directory = %+v", r)
	}
	res, err = c.Call(ctx, "read_text_file", map[string]any{"path": filepath.Join(allowed, "hello.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if r := mcp.ConvertResult("fs", "read_text_file", res); !strings.Contains(text(r), "hello from the allowed folder") {
		t.Fatalf("read_text_file = %+v", r)
	}
	res, err = c.Call(ctx, "read_text_file", map[string]any{"path": filepath.Join(outside, "secret.txt")})
	if err != nil {
		t.Fatal(err)
	}
	r := mcp.ConvertResult("fs", "read_text_file", res)
	if !r.Card.IsError || strings.Contains(text(r), "never read") || !strings.Contains(strings.ToLower(text(r)), "denied") {
		t.Fatalf("read outside the allowed folder = %+v", r)
	}
}

func TestEverythingImageAndCancel(t *testing.T) {
	srv := mcptest.Find(t)
	// The tap's folder first: cleanups run last-first, so the server stops before it
	// goes (it appends to its log until then).
	scope, serverRead := tappedScope(t, "t")
	m := newManager(t)
	ctx := context.Background()
	c, err := m.Get(ctx, srv.EverythingServer("every"), scope)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, "get-tiny-image", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := mcp.ConvertResult("every", "get-tiny-image", res)
	var img *protocol.MCPContent
	for i := range r.Card.Content {
		if r.Card.Content[i].Type == "image" {
			img = &r.Card.Content[i]
		}
	}
	if img == nil || img.MIMEType != "image/png" || !strings.HasPrefix(img.Data, "iVBORw0KGgo") || img.Size == 0 {
		t.Fatalf("no PNG on the card: %+v", r.Card)
	}
	if !strings.Contains(r.Text, "[image image/png") {
		t.Fatalf("the model's text does not describe the image: %q", r.Text)
	}

	// An hour's operation, cancelled once the server has read the call: a return at
	// all is the cancel's.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(cctx, "trigger-long-running-operation", map[string]any{"duration": 3600, "steps": 1})
		done <- err
	}()
	testwait.For(t, "the call at the server", func() bool { return serverRead(`"trigger-long-running-operation"`) })
	began := time.Now()
	cancel()
	if err := testwait.Recv(t, done, "the cancelled call's return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	t.Logf("cancel took %s", time.Since(began))
	// The server survives a cancelled call and serves the next one.
	if _, err := c.Call(ctx, "echo", map[string]any{"message": "still here"}); err != nil {
		t.Fatalf("call after a cancel: %v", err)
	}
}

func TestKilledServerRestartsAtNextUse(t *testing.T) {
	srv := mcptest.Find(t)
	scope, serverRead := tappedScope(t, "t") // before the manager: see above
	m := newManager(t)
	ctx := context.Background()
	cfg := srv.EverythingServer("every")
	c, err := m.Get(ctx, cfg, scope)
	if err != nil {
		t.Fatal(err)
	}
	pids := mcptest.PidsOf(mcptest.Marker(cfg))
	if len(pids) != 1 {
		t.Fatalf("server pids = %v", pids)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "trigger-long-running-operation", map[string]any{"duration": 3600, "steps": 1})
		done <- err
	}()
	// Killed while the server holds the call (it has read it; it answers in an hour).
	testwait.For(t, "the call at the server", func() bool { return serverRead(`"trigger-long-running-operation"`) })
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var de *mcp.DeadError
	if err := testwait.Recv(t, done, "the return of the call on a killed server"); !errors.As(err, &de) || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("call on a killed server: %v", err)
	}
	c2, err := m.Get(ctx, cfg, scope)
	if err != nil {
		t.Fatal(err)
	}
	if c2 == c {
		t.Fatal("the dead instance was handed out again")
	}
	if _, err := c2.Call(ctx, "echo", map[string]any{"message": "again"}); err != nil {
		t.Fatalf("call after the restart: %v", err)
	}
	if now := mcptest.PidsOf(mcptest.Marker(cfg)); len(now) != 1 || now[0] == pids[0] {
		t.Fatalf("pids after restart = %v (before %v)", now, pids)
	}
}

func TestStreamableHTTP(t *testing.T) {
	srv := mcptest.Find(t)
	h := srv.StartEverythingHTTP(t)
	m := newManager(t)
	ctx := context.Background()
	cfg := protocol.MCPServer{Name: "web", Transport: protocol.MCPTransportHTTP, URL: h.URL, Headers: map[string]string{"X-Test": "1"}}
	rep := m.Inspect(ctx, cfg, mcp.Scope{})
	if !rep.OK || rep.ServerName == "" || len(rep.Tools) == 0 || len(rep.Prompts) == 0 || len(rep.Resources) == 0 {
		t.Fatalf("inspect = %+v", rep)
	}
	c, err := m.Get(ctx, cfg, mcp.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, "get-sum", map[string]any{"a": 2, "b": 3})
	if err != nil {
		t.Fatal(err)
	}
	if r := mcp.ConvertResult("web", "get-sum", res); !strings.Contains(r.Text, "5") {
		t.Fatalf("get-sum = %q", r.Text)
	}
}

func TestInspectReportsStartFailure(t *testing.T) {
	m := newManager(t)
	rep := m.Inspect(context.Background(), protocol.MCPServer{Name: "nope", Transport: protocol.MCPTransportStdio, Command: "no-such-mcp-server-xyz"}, mcp.Scope{})
	if rep.OK || !strings.Contains(rep.Hint, "not found") {
		t.Fatalf("report = %+v", rep)
	}
	rep = m.Inspect(context.Background(), protocol.MCPServer{Name: "sh", Transport: protocol.MCPTransportStdio, Command: "sh", Args: []string{"-c", "echo boom >&2; exit 3"}}, mcp.Scope{})
	if rep.OK || !strings.Contains(rep.Stderr, "boom") || !strings.Contains(rep.Error, "exit status 3") {
		t.Fatalf("report = %+v", rep)
	}
}

func TestCloseLeavesNoServer(t *testing.T) {
	srv := mcptest.Find(t)
	m := mcp.NewManager(mcp.Options{})
	ctx := context.Background()
	var marks []string
	for _, name := range []string{"a", "b"} {
		cfg := srv.EverythingServer(name)
		marks = append(marks, mcptest.Marker(cfg))
		if _, err := m.Get(ctx, cfg, mcp.Scope{Key: name}); err != nil {
			t.Fatal(err)
		}
		if n := len(mcptest.PidsOf(mcptest.Marker(cfg))); n != 1 {
			t.Fatalf("%d servers running for %s", n, name)
		}
	}
	// Close returns (testwait's deadline) and leaves no server; how long it took is
	// logged, never judged (a loaded machine decides that, not the code).
	began := time.Now()
	closed := make(chan struct{})
	go func() { _ = m.Close(); close(closed) }()
	testwait.Done(t, closed, "Close's return")
	t.Logf("Close took %s", time.Since(began))
	for _, mark := range marks {
		if left := mcptest.WaitGone(ctx, testwait.Timeout, mark); len(left) > 0 {
			t.Fatalf("servers left after Close: %v", left)
		}
	}
	if _, err := m.Get(ctx, srv.EverythingServer("a"), mcp.Scope{}); !errors.Is(err, mcp.ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}

// A server's headers (its secrets, a sign-in's bearer) go to its own host only: the
// real server behind a redirect on another host (another port) sees none of them.
func TestHeadersStayOnTheServersHost(t *testing.T) {
	srv := mcptest.Find(t)
	h := srv.StartEverythingHTTP(t)
	target, err := url.Parse(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var front, behind []http.Header
	proxy := httputil.NewSingleHostReverseProxy(target)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		behind = append(behind, r.Header.Clone())
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		front = append(front, r.Header.Clone())
		mu.Unlock()
		http.Redirect(w, r, other.URL+target.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()

	m := newManager(t)
	cfg := protocol.MCPServer{Name: "web", Transport: protocol.MCPTransportHTTP, URL: redirector.URL + target.Path,
		Headers: map[string]string{"Authorization": "Bearer sekrit-token", "X-Api-Key": "sekrit-key"}}
	_ = m.Inspect(context.Background(), cfg, mcp.Scope{}) // whether it connects is not the point
	mu.Lock()
	defer mu.Unlock()
	if len(front) == 0 || front[0].Get("X-Api-Key") != "sekrit-key" || front[0].Get("Authorization") != "Bearer sekrit-token" {
		t.Fatalf("the server's own host did not get its headers: %v", front)
	}
	if len(behind) == 0 {
		t.Fatal("the redirect was not followed: the test shows nothing")
	}
	for _, hd := range behind {
		for k, vs := range hd {
			for _, v := range vs {
				if strings.Contains(v, "sekrit") {
					t.Errorf("the other host got %s: %s", k, v)
				}
			}
		}
	}
}
