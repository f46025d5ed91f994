//lint:file-ignore SA1019 roots and sampling are deprecated from MCP 2026-07-28 (SEP-2577) but still served for the servers that use them (issue 26)

package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"talaria/sidecar/protocol"
)

// What a server asks of the client (MCP's client features): roots, elicitation and
// sampling.
//
// Roots: a stdio server whose arguments name no folder of its own is told one root,
// the scope's workspace (file:// URI), and told again (notifications/roots/list_changed)
// when a later Get of the same instance names another workspace. A server given its
// folders by its arguments (server-filesystem /some/folder) keeps them: a root would
// replace them with the workspace, widening what the user narrowed. An HTTP server gets
// no root (a local path means nothing to it and tells it the user's folders).
//
// Elicitation and sampling: a server asks them while it serves a tool call; the call's
// context carries the Requests that answers them (WithRequests). A request that comes
// while no call with Requests is in flight on the instance, or while calls of two
// different Requests are (two chats sharing the instance), is refused with an error:
// nothing is asked of a user who cannot tell which chat it belongs to.

// Requests answers a server's elicitation and sampling requests for the tool call in
// whose context it was set (WithRequests). server is the server's configured name.
// Implementations must not return before the user answered or ctx ended (then they
// return ctx's error, which the server gets as an error).
type Requests interface {
	// Elicit asks the user for what req describes (form mode: req.RequestedSchema, a
	// flat JSON schema object; url mode: req.URL). The result's Action is "accept"
	// (with Content), "decline" or "cancel".
	Elicit(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error)
	// CreateMessage samples the chat's model for the server, after the user allowed
	// it; a refusal is an error.
	CreateMessage(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)
}

type requestsKey struct{}

// WithRequests returns ctx carrying rq for the tool calls made with it (Conn.Call).
func WithRequests(ctx context.Context, rq Requests) context.Context {
	return context.WithValue(ctx, requestsKey{}, rq)
}

// ErrNoRequester says a server asked for elicitation or sampling outside a tool call
// that can answer it (or during calls of two chats at once).
var ErrNoRequester = errors.New("no single tool call of a chat is in flight to ask the user")

// inflight is a tool call with Requests in flight on a Conn.
type inflight struct {
	ctx context.Context
	rq  Requests
}

// callers tracks a Conn's tool calls that carry Requests.
type callers struct {
	mu    sync.Mutex
	calls map[*inflight]bool
}

func (c *callers) add(ctx context.Context) func() {
	rq, _ := ctx.Value(requestsKey{}).(Requests)
	if rq == nil {
		return func() {}
	}
	f := &inflight{ctx: ctx, rq: rq}
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[*inflight]bool{}
	}
	c.calls[f] = true
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.calls, f)
		c.mu.Unlock()
	}
}

// one returns the single Requests in flight with a context that ends when either the
// request's ctx or the call's ends. Errors: ErrNoRequester.
func (c *callers) one(ctx context.Context) (Requests, context.Context, context.CancelFunc, error) {
	c.mu.Lock()
	var found *inflight
	for f := range c.calls {
		if found != nil && found.rq != f.rq {
			c.mu.Unlock()
			return nil, nil, nil, ErrNoRequester
		}
		found = f
	}
	c.mu.Unlock()
	if found == nil {
		return nil, nil, nil, ErrNoRequester
	}
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(found.ctx, cancel)
	return found.rq, rctx, func() { stop(); cancel() }, nil
}

func (c *Conn) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	rq, rctx, done, err := c.callers.one(ctx)
	if err != nil {
		c.log.Info("MCP elicitation refused", "err", err)
		return nil, fmt.Errorf("elicitation refused: %w", err)
	}
	defer done()
	return rq.Elicit(rctx, c.srv.Name, req.Params)
}

func (c *Conn) createMessage(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	rq, rctx, done, err := c.callers.one(ctx)
	if err != nil {
		c.log.Info("MCP sampling refused", "err", err)
		return nil, fmt.Errorf("sampling refused: %w", err)
	}
	defer done()
	return rq.CreateMessage(rctx, c.srv.Name, req.Params)
}

// rootURI is the file:// URI of folder dir.
func rootURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// wantsRoot reports whether the instance is told the workspace as its root: a stdio
// server whose arguments name no existing folder.
func (c *Conn) wantsRoot() bool {
	if c.srv.Transport != "" && c.srv.Transport != protocol.MCPTransportStdio {
		return false
	}
	for _, a := range c.srv.Args {
		if !filepath.IsAbs(a) {
			continue
		}
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			return false
		}
	}
	return true
}

// setRoot makes workspace the instance's one root (none when ""), telling the server
// when it changed.
func (c *Conn) setRoot(workspace string) {
	c.rootMu.Lock()
	defer c.rootMu.Unlock()
	if c.cl == nil || !c.rooted || workspace == c.root {
		return
	}
	old := c.root
	c.root = workspace
	// The old root goes first: the server never holds both at once.
	if old != "" {
		c.cl.RemoveRoots(rootURI(old))
	}
	if workspace != "" {
		c.cl.AddRoots(&sdk.Root{URI: rootURI(workspace), Name: filepath.Base(workspace)})
	}
	c.log.Info("MCP root changed", "root", strings.TrimSpace(workspace))
}
