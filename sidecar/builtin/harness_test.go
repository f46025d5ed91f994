package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// frame is one emitted frame, its data as JSON.
type frame struct {
	event string
	data  json.RawMessage
}

// chatRun is a chat.start running in the background, its frames recorded.
type chatRun struct {
	t      *testing.T
	cancel context.CancelFunc
	done   chan struct{}
	res    protocol.ChatResult
	err    error

	mu     sync.Mutex
	frames []frame
	cond   chan struct{} // closed and replaced on every frame
}

func startChat(t *testing.T, rt *Runtime, p protocol.ChatStartParams) *chatRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &chatRun{t: t, cancel: cancel, done: make(chan struct{}), cond: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.res, c.err = rt.Chat(ctx, p, c.emit)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-c.done:
		case <-time.After(testwait.Timeout):
			t.Errorf("a chat.start did not end within %v of its cancel", testwait.Timeout)
		}
	})
	return c
}

func (c *chatRun) emit(event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.frames = append(c.frames, frame{event, b})
	close(c.cond)
	c.cond = make(chan struct{})
	c.mu.Unlock()
	return nil
}

func (c *chatRun) list() []frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]frame(nil), c.frames...)
}

// waitFor waits (testwait's deadline) for the n-th (1-based) frame of an event and
// decodes its data into v.
func (c *chatRun) waitFor(event string, n int, v any) {
	c.t.Helper()
	deadline := time.NewTimer(testwait.Timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		seen := 0
		for _, f := range c.frames {
			if f.event == event {
				if seen++; seen == n {
					c.mu.Unlock()
					if v != nil {
						if err := json.Unmarshal(f.data, v); err != nil {
							c.t.Fatal(err)
						}
					}
					return
				}
			}
		}
		ch := c.cond
		c.mu.Unlock()
		select {
		case <-ch:
		case <-c.done:
			// One more look: the frame may have come with the end.
			c.mu.Lock()
			found := 0
			for _, f := range c.frames {
				if f.event == event {
					found++
				}
			}
			c.mu.Unlock()
			if found >= n {
				continue
			}
			c.t.Fatalf("the turn ended (err %v) before %s #%d; frames: %s", c.err, event, n, c.summary())
		case <-deadline.C:
			c.t.Fatalf("no %s #%d within %v; frames: %s", event, n, testwait.Timeout, c.summary())
		}
	}
}

// result waits (testwait's deadline) for the turn to end.
func (c *chatRun) result() (protocol.ChatResult, error) {
	c.t.Helper()
	select {
	case <-c.done:
	case <-time.After(testwait.Timeout):
		c.t.Fatalf("the turn did not end within %v; frames: %s", testwait.Timeout, c.summary())
	}
	return c.res, c.err
}

func (c *chatRun) mustResult() protocol.ChatResult {
	c.t.Helper()
	res, err := c.result()
	if err != nil {
		c.t.Fatalf("chat failed: %v", err)
	}
	return res
}

// events lists the frames' events, in order.
func (c *chatRun) events() []string {
	var out []string
	for _, f := range c.list() {
		out = append(out, f.event)
	}
	return out
}

// of returns the data of every frame of an event.
func (c *chatRun) of(event string) []json.RawMessage {
	var out []json.RawMessage
	for _, f := range c.list() {
		if f.event == event {
			out = append(out, f.data)
		}
	}
	return out
}

func (c *chatRun) summary() string {
	var sb strings.Builder
	for _, f := range c.list() {
		d := string(f.data)
		if len(d) > 200 {
			d = d[:200] + "…"
		}
		sb.WriteString("\n  " + f.event + " " + d)
	}
	return sb.String()
}

// toolParams are chat.start params for a session working in dir.
func toolParams(p *providertest.Server, session, dir string) protocol.ChatStartParams {
	return protocol.ChatStartParams{
		SessionID: session, StreamID: "st-" + session, Workspace: dir, Model: "scripted-model",
		Provider:    protocol.Provider{Name: "Scripted", BaseURL: p.BaseURL()},
		UserMessage: "Do the thing.",
	}
}

// workspace returns a temporary workspace with a few files.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// toolComplete decodes tool_complete frames.
func toolCompletes(t *testing.T, c *chatRun) []protocol.ToolCompleteData {
	t.Helper()
	var out []protocol.ToolCompleteData
	for _, d := range c.of(protocol.EvToolComplete) {
		var x protocol.ToolCompleteData
		if err := json.Unmarshal(d, &x); err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

// rawField reads one field of a raw_result.
func rawField(t *testing.T, raw json.RawMessage, field string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("raw_result %s: %v", raw, err)
	}
	return m[field]
}
