//go:build linux

package mcp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/mcp"
	"talaria/sidecar/mcp/mcptest"
	"talaria/sidecar/protocol"
)

// silentServer is a stdio server that reads its stdin and never answers: it never
// finishes the MCP handshake.
func silentServer(t *testing.T, name string) protocol.MCPServer {
	t.Helper()
	script := filepath.Join(t.TempDir(), "silent.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n# Reads requests, answers none, keeps its stdout open.\nwhile read -r _; do :; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return protocol.MCPServer{Name: name, Transport: protocol.MCPTransportStdio, Command: script}
}

// within runs f and fails the test when it has not returned within testwait.Timeout
// (a call that blocks is a failure, not a hang).
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(testwait.Timeout):
		t.Fatalf("%s did not return within %v", what, testwait.Timeout)
		panic("unreachable")
	}
}

type got struct {
	c   *mcp.Conn
	err error
}

// A server that never finishes its handshake makes Ready wait once; the next Ready
// does not wait for it at all (even when told it may wait an hour), while a good
// server beside it is used.
func TestReadyWaitsForASilentServerOnce(t *testing.T) {
	srv := mcptest.Find(t)
	m := newManager(t) // the default connect timeout: the silent start runs on
	scope := mcp.Scope{Key: "t", Workspace: t.TempDir()}
	silent := silentServer(t, "silent")
	ctx := context.Background()

	r := within(t, "the first Ready", func() got {
		c, err := m.Ready(ctx, silent, scope, 200*time.Millisecond)
		return got{c, err}
	})
	var slow *mcp.SlowError
	if !errors.As(r.err, &slow) || slow.Server != "silent" {
		t.Fatalf("first Ready = %v, %v; want a *SlowError naming the server", r.c, r.err)
	}
	r = within(t, "the second Ready", func() got {
		c, err := m.Ready(ctx, silent, scope, time.Hour)
		return got{c, err}
	})
	if !errors.As(r.err, &slow) {
		t.Fatalf("second Ready = %v, %v; want a *SlowError at once", r.c, r.err)
	}
	r = within(t, "Ready of a good server", func() got {
		c, err := m.Ready(ctx, srv.EverythingServer("good"), scope, time.Hour)
		return got{c, err}
	})
	if r.err != nil {
		t.Fatalf("the good server: %v", r.err)
	}
	if _, err := r.c.Tools(ctx); err != nil {
		t.Fatal(err)
	}
}

// A start that failed (here: the handshake timed out) is remembered: Ready returns the
// failure at once and starts the server again in the background; Stop forgets it.
func TestReadyRemembersAFailedStart(t *testing.T) {
	m := mcp.NewManager(mcp.Options{ClientVersion: "test", ConnectTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { _ = m.Close() })
	scope := mcp.Scope{Key: "t", Workspace: t.TempDir()}
	silent := silentServer(t, "silent")
	ctx := context.Background()

	// Get waits for the whole start: the handshake's timeout.
	_, err := m.Get(ctx, silent, scope)
	var se *mcp.StartError
	if !errors.As(err, &se) {
		t.Fatalf("Get = %v; want a *StartError", err)
	}
	if m.LastError(silent, scope) == nil {
		t.Fatal("the failed start is not remembered")
	}
	r := within(t, "Ready after a failure", func() got {
		c, err := m.Ready(ctx, silent, scope, time.Hour)
		return got{c, err}
	})
	if !errors.As(r.err, &se) {
		t.Fatalf("Ready = %v, %v; want the last *StartError at once", r.c, r.err)
	}
	m.Stop([]string{"silent"})
	if m.LastError(silent, scope) != nil {
		t.Fatal("Stop did not forget the failure")
	}
	testwait.For(t, "no instance left", func() bool { return m.Running() == 0 })
}

// A caller that gives up does not end the start: a later Get finds the server ready.
func TestStartOutlivesTheCaller(t *testing.T) {
	srv := mcptest.Find(t)
	m := newManager(t)
	scope := mcp.Scope{Key: "t", Workspace: t.TempDir()}
	cfg := srv.EverythingServer("ev")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Get(ctx, cfg, scope); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with a cancelled context = %v", err)
	}
	var c *mcp.Conn
	testwait.For(t, "the start to finish in the background", func() bool {
		var err error
		c, err = m.Ready(context.Background(), cfg, scope, 0)
		var slow *mcp.SlowError
		if err != nil && !errors.As(err, &slow) {
			t.Fatalf("Ready: %v", err)
		}
		return err == nil
	})
	if m.Running() != 1 {
		t.Fatalf("%d instances run; want the one started in the background", m.Running())
	}
	if _, err := c.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// mute answers the MCP handshake (initialize; any other request but tools/list is
// "method not found", so a newer client falls back to initialize) and never lists its
// tools.
const mute = `const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(Object.assign({ jsonrpc: '2.0' }, m)) + '\n');
rl.on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined || msg.method === 'tools/list') return;
  if (msg.method === 'initialize') {
    send({ id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'mute', version: '1' } } });
  } else {
    send({ id: msg.id, error: { code: -32601, message: 'method not found' } });
  }
});
`

// A server that finishes its handshake but never lists its tools makes a caller of
// ToolsReady wait once; once the listing runs out of the connect timeout the instance
// ends and Ready returns that failure at once.
func TestToolsReadyWaitsForAMuteServerOnce(t *testing.T) {
	srv := mcptest.Find(t)
	script := filepath.Join(t.TempDir(), "mute.cjs")
	if err := os.WriteFile(script, []byte(mute), 0o644); err != nil {
		t.Fatal(err)
	}
	m := mcp.NewManager(mcp.Options{ClientVersion: "test", ConnectTimeout: 5 * time.Second})
	t.Cleanup(func() { _ = m.Close() })
	scope := mcp.Scope{Key: "t", Workspace: t.TempDir()}
	cfg := protocol.MCPServer{Name: "mute", Transport: protocol.MCPTransportStdio, Command: srv.Node, Args: []string{script}}
	ctx := context.Background()
	c, err := m.Get(ctx, cfg, scope)
	if err != nil {
		t.Fatal(err)
	}
	type listed struct{ err error }
	var slow *mcp.SlowError
	r := within(t, "the first ToolsReady", func() listed { _, err := c.ToolsReady(ctx, 100*time.Millisecond); return listed{err} })
	if !errors.As(r.err, &slow) {
		t.Fatalf("first ToolsReady = %v; want a *SlowError", r.err)
	}
	r = within(t, "the second ToolsReady", func() listed { _, err := c.ToolsReady(ctx, time.Hour); return listed{err} })
	if !errors.As(r.err, &slow) {
		t.Fatalf("second ToolsReady = %v; want a *SlowError at once", r.err)
	}
	testwait.For(t, "the listing to fail", func() bool { return m.LastError(cfg, scope) != nil })
	var se *mcp.StartError
	g := within(t, "Ready after the failed listing", func() got {
		c, err := m.Ready(ctx, cfg, scope, time.Hour)
		return got{c, err}
	})
	if !errors.As(g.err, &se) || !strings.Contains(se.Error(), "did not list its tools") {
		t.Fatalf("Ready = %v, %v; want the listing's failure at once", g.c, g.err)
	}
}
