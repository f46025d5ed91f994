package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"talaria/sidecar/protocol"
)

// What a connected server offers (its tools, prompts and resources, listed once and
// kept until it reports a change), calling its tools, and the report Settings' Test
// shows.

// Tools returns the server's tools (cached until it reports a change). Errors: see
// failure.
func (c *Conn) Tools(ctx context.Context) ([]*sdk.Tool, error) {
	c.mu.Lock()
	if c.toolsValid {
		t := c.tools
		c.mu.Unlock()
		return t, nil
	}
	c.mu.Unlock()
	var tools []*sdk.Tool
	for t, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, c.failure(ctx, err)
		}
		if t == nil || t.Name == "" {
			continue
		}
		tools = append(tools, t)
		if len(tools) >= maxTools {
			break
		}
	}
	c.mu.Lock()
	c.tools, c.toolsValid = tools, true
	c.mu.Unlock()
	return tools, nil
}

// listing is one background tools/list: done is closed when tools and err are set.
type listing struct {
	done  chan struct{}
	tools []*sdk.Tool
	err   error
}

// ToolsReady is Tools for a turn that must not wait long: the listing runs in the
// background (bounded by the connect timeout) and the caller waits at most wait, not
// at all when an earlier listing made a caller wait in vain; a later call gets the
// cached result. A listing that runs out of the connect timeout ends the instance and
// is remembered as its start's failure (so no caller waits for the server again before
// a start succeeds). Errors: *SlowError while the listing goes on; see Tools.
func (c *Conn) ToolsReady(ctx context.Context, wait time.Duration) ([]*sdk.Tool, error) {
	c.mu.Lock()
	if c.toolsValid {
		t := c.tools
		c.mu.Unlock()
		return t, nil
	}
	l := c.listing
	if l == nil {
		l = &listing{done: make(chan struct{})}
		c.listing = l
		go c.list(l)
	}
	if c.listSlow {
		wait = 0
	}
	c.mu.Unlock()
	timer := time.NewTimer(max(wait, 0))
	defer timer.Stop()
	select {
	case <-l.done:
		return l.tools, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		select {
		case <-l.done:
			return l.tools, l.err
		default:
		}
		c.mu.Lock()
		c.listSlow = true
		c.mu.Unlock()
		return nil, &SlowError{Server: c.srv.Name, Waited: wait}
	}
}

// list runs one background listing of ToolsReady.
func (c *Conn) list(l *listing) {
	defer close(l.done)
	lctx, cancel := context.WithTimeout(c.m.bg, c.m.connectTimeout)
	defer cancel()
	l.tools, l.err = c.Tools(lctx)
	c.mu.Lock()
	if c.listing == l {
		c.listing = nil
	}
	c.mu.Unlock()
	if l.err != nil && errors.Is(lctx.Err(), context.DeadlineExceeded) {
		l.err = &StartError{Server: c.srv.Name, Err: fmt.Errorf("it did not list its tools within %s", c.m.connectTimeout),
			Hint: "The server answered the MCP handshake but not tools/list; see its output below.", Stderr: c.stderr.String()}
		c.m.failedLate(c, l.err)
		c.Close()
	}
}

// Call calls one tool with args (a JSON object's members). The server's elicitation
// and sampling requests during the call go to the Requests ctx carries (WithRequests;
// none: they are refused). A tool that failed on its
// own terms is a result with IsError; errors are the request's (see failure).
func (c *Conn) Call(ctx context.Context, tool string, args map[string]any) (*sdk.CallToolResult, error) {
	c.busy.Add(1)
	defer c.busy.Add(-1)
	defer c.touch()
	if args == nil {
		args = map[string]any{}
	}
	defer c.callers.add(ctx)()
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, c.failure(ctx, err)
	}
	return res, nil
}

// Prompts lists the server's prompts ([] when it has none).
func (c *Conn) Prompts(ctx context.Context) ([]protocol.MCPPromptInfo, error) {
	out := []protocol.MCPPromptInfo{}
	if !c.has(func(sc *sdk.ServerCapabilities) bool { return sc.Prompts != nil }) {
		return out, nil
	}
	for p, err := range c.cs.Prompts(ctx, nil) {
		if err != nil {
			return nil, c.failure(ctx, err)
		}
		if p == nil || p.Name == "" {
			continue
		}
		info := protocol.MCPPromptInfo{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: []protocol.MCPPromptArgument{}}
		for _, a := range p.Arguments {
			if a != nil {
				info.Arguments = append(info.Arguments, protocol.MCPPromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
			}
		}
		out = append(out, info)
		if len(out) >= maxListed {
			break
		}
	}
	return out, nil
}

// Resources lists the server's resources and resource templates ([] when none).
func (c *Conn) Resources(ctx context.Context) ([]protocol.MCPResourceInfo, error) {
	out := []protocol.MCPResourceInfo{}
	if !c.has(func(sc *sdk.ServerCapabilities) bool { return sc.Resources != nil }) {
		return out, nil
	}
	for r, err := range c.cs.Resources(ctx, nil) {
		if err != nil {
			return nil, c.failure(ctx, err)
		}
		if r == nil || r.URI == "" {
			continue
		}
		out = append(out, protocol.MCPResourceInfo{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Size: r.Size})
		if len(out) >= maxListed {
			return out, nil
		}
	}
	for r, err := range c.cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			break // templates are optional; some servers answer method not found
		}
		if r == nil || r.URITemplate == "" {
			continue
		}
		out = append(out, protocol.MCPResourceInfo{URI: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Template: true})
		if len(out) >= maxListed {
			break
		}
	}
	return out, nil
}

// GetPrompt renders one prompt with its arguments.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string) (*sdk.GetPromptResult, error) {
	c.touch()
	res, err := c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, c.failure(ctx, err)
	}
	return res, nil
}

// ReadResource reads one resource.
func (c *Conn) ReadResource(ctx context.Context, uri string) (*sdk.ReadResourceResult, error) {
	c.touch()
	res, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, c.failure(ctx, err)
	}
	return res, nil
}

func (c *Conn) has(f func(*sdk.ServerCapabilities) bool) bool {
	ir := c.cs.InitializeResult()
	return ir != nil && ir.Capabilities != nil && f(ir.Capabilities)
}

// Report describes the instance: its identity and everything it offers.
func (c *Conn) Report(ctx context.Context) protocol.MCPServerReport {
	rep := protocol.MCPServerReport{Name: c.srv.Name, OK: true, Tools: []protocol.MCPToolInfo{}, Prompts: []protocol.MCPPromptInfo{}, Resources: []protocol.MCPResourceInfo{}}
	if ir := c.cs.InitializeResult(); ir != nil {
		rep.Protocol = ir.ProtocolVersion
		rep.Instructions = trim(ir.Instructions, 4000)
		if ir.ServerInfo != nil {
			rep.ServerName, rep.ServerVersion = ir.ServerInfo.Name, ir.ServerInfo.Version
		}
	}
	tools, err := c.Tools(ctx)
	if err != nil {
		fillFailure(&rep, err)
		return rep
	}
	for _, t := range tools {
		rep.Tools = append(rep.Tools, ToolInfo(t))
	}
	if rep.Prompts, err = c.Prompts(ctx); err != nil {
		rep.Prompts = []protocol.MCPPromptInfo{}
		fillFailure(&rep, err)
		return rep
	}
	if rep.Resources, err = c.Resources(ctx); err != nil {
		rep.Resources = []protocol.MCPResourceInfo{}
		fillFailure(&rep, err)
		return rep
	}
	return rep
}
