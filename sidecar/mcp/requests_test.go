//go:build linux

//lint:file-ignore SA1019 roots and sampling are deprecated from MCP 2026-07-28 (SEP-2577) but still served for the servers that use them (issue 26)

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"talaria/internal/testwait"
	"talaria/sidecar/mcp"
	"talaria/sidecar/mcp/mcptest"
)

// callText calls tool and returns its result's text for the model; a failed request
// fails the test.
func callText(t *testing.T, ctx context.Context, c *mcp.Conn, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := c.Call(ctx, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return mcp.ConvertResult("s", tool, res).Text, res.IsError
}

// TestRootsAreTheWorkspace: server-everything lists the one root it was told (the
// scope's workspace) and, after a Get of the same instance with another workspace, the
// new one alone.
func TestRootsAreTheWorkspace(t *testing.T) {
	srv := mcptest.Find(t)
	m := newManager(t)
	ctx := context.Background()
	first, second := t.TempDir(), t.TempDir()
	cfg := srv.EverythingServer("every")
	c, err := m.Get(ctx, cfg, mcp.Scope{Key: "t", Workspace: first})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := callText(t, ctx, c, "get-roots-list", nil)
	if !strings.Contains(got, "(1 total)") || !strings.Contains(got, "URI: file://"+first+"\n") {
		t.Fatalf("roots = %q, want the workspace %s alone", got, first)
	}
	c2, err := m.Get(ctx, cfg, mcp.Scope{Key: "t", Workspace: second})
	if err != nil || c2 != c {
		t.Fatalf("second Get: %v (same instance: %v)", err, c2 == c)
	}
	// The server fetches the list again on roots/list_changed, in its own time.
	testwait.For(t, "the server to list the new workspace", func() bool {
		got, _ = callText(t, ctx, c, "get-roots-list", nil)
		return strings.Contains(got, "URI: file://"+second+"\n")
	})
	if !strings.Contains(got, "(1 total)") || strings.Contains(got, first) {
		t.Fatalf("roots after the change = %q, want %s alone", got, second)
	}
}

// TestFolderArgumentsKeepTheirFolders: server-filesystem given a folder keeps it (a
// root would widen it to the workspace); started without one, it serves the workspace
// it was told as its root.
func TestFolderArgumentsKeepTheirFolders(t *testing.T) {
	srv := mcptest.Find(t)
	m := newManager(t)
	ctx := context.Background()
	ws := t.TempDir()
	narrow := filepath.Join(ws, "notes")
	if err := mkdir(narrow); err != nil {
		t.Fatal(err)
	}
	scope := mcp.Scope{Key: "t", Workspace: ws}
	given, err := m.Get(ctx, srv.FilesystemServer("given", narrow), scope)
	if err != nil {
		t.Fatal(err)
	}
	rooted, err := m.Get(ctx, srv.FilesystemServer("rooted"), scope)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	testwait.For(t, "the rootless server to take the workspace", func() bool {
		got, _ = callText(t, ctx, rooted, "list_allowed_directories", nil)
		return strings.Contains(got, ws)
	})
	// The server with a folder argument asked for no roots: by the time the other one
	// took its root, this one (started first) had read its settings long before.
	got, _ = callText(t, ctx, given, "list_allowed_directories", nil)
	if !strings.Contains(got, narrow) || strings.Contains(strings.ReplaceAll(got, narrow, ""), ws) {
		t.Fatalf("allowed directories = %q, want %s alone", got, narrow)
	}
}

// scripted is a Requests that answers with fixed results and records what it was
// asked.
type scripted struct {
	mu      sync.Mutex
	elicits []*sdk.ElicitParams
	samples []*sdk.CreateMessageParams
	elicit  func(ctx context.Context) (*sdk.ElicitResult, error)
	sample  func(ctx context.Context) (*sdk.CreateMessageResult, error)
}

func (s *scripted) Elicit(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	s.mu.Lock()
	s.elicits = append(s.elicits, req)
	s.mu.Unlock()
	return s.elicit(ctx)
}

func (s *scripted) CreateMessage(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	s.mu.Lock()
	s.samples = append(s.samples, req)
	s.mu.Unlock()
	return s.sample(ctx)
}

// TestElicitationGoesToTheCall: server-everything's elicitation reaches the Requests
// of the call in flight with its schema; accept, decline and cancel reach the server;
// a call without Requests has its elicitation refused; a call cancelled while the
// user is asked ends the question.
func TestElicitationGoesToTheCall(t *testing.T) {
	srv := mcptest.Find(t)
	m := newManager(t)
	ctx := context.Background()
	c, err := m.Get(ctx, srv.EverythingServer("every"), mcp.Scope{Key: "t"})
	if err != nil {
		t.Fatal(err)
	}
	answer := &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace", "check": true}}
	rq := &scripted{elicit: func(context.Context) (*sdk.ElicitResult, error) { return answer, nil }}
	got, isErr := callText(t, mcp.WithRequests(ctx, rq), c, "trigger-elicitation-request", nil)
	if isErr || !strings.Contains(got, "- Name: Ada Lovelace") || !strings.Contains(got, "- Agreed to terms: true") {
		t.Fatalf("accepted elicitation: %q (error %v)", got, isErr)
	}
	if len(rq.elicits) != 1 {
		t.Fatalf("%d elicitations", len(rq.elicits))
	}
	schema, _ := json.Marshal(rq.elicits[0].RequestedSchema)
	if rq.elicits[0].Message != "Please provide inputs for the following fields:" || !strings.Contains(string(schema), `"name":{`) ||
		!strings.Contains(string(schema), `"format":"email"`) {
		t.Fatalf("elicitation = %q %s", rq.elicits[0].Message, schema)
	}

	for _, action := range []string{"decline", "cancel"} {
		answer = &sdk.ElicitResult{Action: action}
		got, _ = callText(t, mcp.WithRequests(ctx, rq), c, "trigger-elicitation-request", nil)
		if !strings.Contains(got, `"action": "`+action+`"`) {
			t.Fatalf("%s: %q", action, got)
		}
	}

	// No chat to ask: the server gets an error, nobody is asked.
	res, err := c.Call(ctx, "trigger-elicitation-request", nil)
	if err == nil && !res.IsError {
		t.Fatalf("an elicitation with nobody to ask was answered: %+v", mcp.ConvertResult("s", "x", res).Text)
	}
	if len(rq.elicits) != 3 {
		t.Fatalf("%d elicitations, want 3", len(rq.elicits))
	}

	// A call cancelled while its question is open ends the question.
	asked := make(chan bool, 1)
	ended := make(chan error, 1)
	rq.elicit = func(ctx context.Context) (*sdk.ElicitResult, error) {
		asked <- true
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	}
	cctx, cancel := context.WithCancel(mcp.WithRequests(ctx, rq))
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(cctx, "trigger-elicitation-request", nil)
		done <- err
	}()
	testwait.Recv(t, asked, "the question")
	cancel()
	if err := testwait.Recv(t, ended, "the question's end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("question ended with %v", err)
	}
	if err := testwait.Recv(t, done, "the call's return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
}

// TestSamplingGoesToTheCall: server-everything's sampling request reaches the call's
// Requests with its prompt; the answer reaches the server; a refusal is an error there.
func TestSamplingGoesToTheCall(t *testing.T) {
	srv := mcptest.Find(t)
	m := newManager(t)
	ctx := context.Background()
	c, err := m.Get(ctx, srv.EverythingServer("every"), mcp.Scope{Key: "t"})
	if err != nil {
		t.Fatal(err)
	}
	rq := &scripted{sample: func(context.Context) (*sdk.CreateMessageResult, error) {
		return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: "a haiku about roots"}, Model: "scripted-model", Role: "assistant"}, nil
	}}
	got, isErr := callText(t, mcp.WithRequests(ctx, rq), c, "trigger-sampling-request", map[string]any{"prompt": "write a haiku", "maxTokens": 50})
	if isErr || !strings.Contains(got, "a haiku about roots") || !strings.Contains(got, "scripted-model") {
		t.Fatalf("sampling result: %q (error %v)", got, isErr)
	}
	if len(rq.samples) != 1 || rq.samples[0].MaxTokens != 50 || rq.samples[0].SystemPrompt != "You are a helpful test server." {
		t.Fatalf("samples = %+v", rq.samples)
	}
	if tc, ok := rq.samples[0].Messages[0].Content.(*sdk.TextContent); !ok || !strings.Contains(tc.Text, "write a haiku") {
		t.Fatalf("sampled message = %+v", rq.samples[0].Messages[0].Content)
	}
	rq.sample = func(context.Context) (*sdk.CreateMessageResult, error) {
		return nil, errors.New("the user refused the sampling request")
	}
	res, err := c.Call(mcp.WithRequests(ctx, rq), "trigger-sampling-request", map[string]any{"prompt": "again", "maxTokens": 50})
	if err == nil && !res.IsError {
		t.Fatalf("a refused sampling request was answered: %q", mcp.ConvertResult("s", "x", res).Text)
	}
}

func mkdir(dir string) error { return os.MkdirAll(dir, 0o755) }
