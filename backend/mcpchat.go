package backend

import (
	"context"
	"fmt"
	"slices"

	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// A chat's MCP servers: which of the user's servers go with its turns (its own on/off
// per server, or its parent's), and reading a prompt or a resource of one of them for
// the chat's composer.

// ChatMCPServer is one server as a chat's MCP menu shows it: whether it is on in this
// chat, whether that is the chat's own choice (Override) or the global setting.
type ChatMCPServer struct {
	Name      string `json:"name"`
	Transport string `json:"transport" ts:"McpTransport"`
	On        bool   `json:"on"`
	Global    bool   `json:"global"`   // its global Enabled
	Override  bool   `json:"override"` // the chat chose On itself
}

// ChatMCP is a chat's MCP menu: its servers and a note when the chat's runtime does
// not use them as Talaria runs them (Hermes uses its own profile's servers).
type ChatMCP struct {
	Servers []ChatMCPServer `json:"servers"`
	Note    string          `json:"note"`
	// Used says whether the chat's runtime uses these servers at all.
	Used bool `json:"used"`
}

// MCPPromptText is a rendered prompt of a chat's server, for the composer.
type MCPPromptText struct {
	Server      string `json:"server"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Text        string `json:"text"`
}

// chatMCPChoice is a chat's own on/off per server (ChatOptions.MCPServers), falling
// back to its parent's for a background task or side question.
func (s *Service) chatMCPChoice(ctx context.Context, sess store.Session) map[string]bool {
	for depth := 0; depth < 3; depth++ {
		if o := chatOptions(sess); o.MCPServers != nil {
			return o.MCPServers
		}
		if sess.ParentID == "" {
			break
		}
		parent, err := s.Store.GetSession(ctx, sess.ParentID)
		if err != nil {
			break
		}
		sess = parent
	}
	return nil
}

// mcpServersFor returns the servers a chat enables, secrets resolved, for chat.start.
func (s *Service) mcpServersFor(ctx context.Context, sess store.Session) []protocol.MCPServer {
	list, err := s.readMCPServers(ctx)
	if err != nil {
		s.Log.Warn("MCP servers unreadable; the turn runs without them", "err", err)
		return nil
	}
	choice := s.chatMCPChoice(ctx, sess)
	var out []protocol.MCPServer
	for _, c := range list {
		on := c.Enabled
		if v, ok := choice[c.Name]; ok {
			on = v
		}
		if on {
			out = append(out, s.withMCPBearer(ctx, s.resolveMCP(c)))
		}
	}
	return out
}

// GetChatMCP returns a chat's MCP menu. Errors: store.ErrNotFound.
func (area *MCPArea) GetChatMCP(ctx context.Context, sessionID string) (ChatMCP, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return ChatMCP{}, err
	}
	list, err := s.readMCPServers(ctx)
	if err != nil {
		return ChatMCP{}, err
	}
	own := chatOptions(sess).MCPServers
	out := ChatMCP{Servers: []ChatMCPServer{}, Used: true}
	for _, c := range list {
		cs := ChatMCPServer{Name: c.Name, Transport: c.Transport, On: c.Enabled, Global: c.Enabled}
		if v, ok := own[c.Name]; ok {
			cs.On, cs.Override = v, true
		}
		out.Servers = append(out.Servers, cs)
	}
	switch core.AgentKind(sess.Runtime) {
	case protocol.RuntimeHermes:
		out.Used = false
		out.Note = "This chat runs on Hermes Agent, which uses the MCP servers of its own profile (mcp_servers in the profile's config.yaml), not the ones set here."
	case protocol.RuntimeACP:
		out.Note = "This chat's agent gets the servers that are on when its session starts, and runs and asks about their tools itself."
	}
	return out, nil
}

// SetChatMCPServer turns a server on or off in one chat (on nil: follow the global
// setting again). It applies from the chat's next turn. Errors: store.ErrNotFound;
// *MCPSettingsError for an unknown server.
func (area *MCPArea) SetChatMCPServer(ctx context.Context, sessionID, name string, on *bool) (ChatMCP, error) {
	s := area.s
	list, err := s.readMCPServers(ctx)
	if err != nil {
		return ChatMCP{}, err
	}
	if on != nil && !slices.ContainsFunc(list, func(x MCPServerConfig) bool { return x.Name == name }) {
		return ChatMCP{}, &MCPSettingsError{Server: name, Field: "name", Message: fmt.Sprintf("there is no MCP server named %q", name)}
	}
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return ChatMCP{}, err
	}
	o := chatOptions(sess)
	if o.MCPServers == nil {
		o.MCPServers = map[string]bool{}
	}
	if on == nil {
		delete(o.MCPServers, name)
	} else {
		o.MCPServers[name] = *on
	}
	if _, err := s.Settings().SetChatOptions(ctx, sessionID, o); err != nil {
		return ChatMCP{}, err
	}
	return s.MCP().GetChatMCP(ctx, sessionID)
}

// ListChatMCP starts (when not running) the servers a chat enables and returns what
// each offers: the composer's prompts and the resources a message can attach. A server
// that fails is a report with OK false. Errors: store.ErrNotFound; a sidecar error.
func (area *MCPArea) ListChatMCP(ctx context.Context, sessionID string) ([]protocol.MCPServerReport, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	servers := s.mcpServersFor(ctx, sess)
	if len(servers) == 0 {
		return []protocol.MCPServerReport{}, nil
	}
	scope, err := s.mcpScope(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, mcpListTimeout)
	defer cancel()
	var res protocol.MCPListResult
	if err := s.Sidecar.Call(cctx, protocol.MethodMCPList, protocol.MCPListParams{MCPScope: scope, Servers: servers}, nil, &res); err != nil {
		return nil, err
	}
	return res.Servers, nil
}

// chatServer is one enabled server of a chat with its scope. Errors: *MCPSettingsError
// when the chat does not enable it.
func (s *Service) chatServer(ctx context.Context, sessionID, name string) (protocol.MCPServer, protocol.MCPScope, error) {
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return protocol.MCPServer{}, protocol.MCPScope{}, err
	}
	for _, srv := range s.mcpServersFor(ctx, sess) {
		if srv.Name == name {
			scope, err := s.mcpScope(ctx, sessionID)
			return srv, scope, err
		}
	}
	return protocol.MCPServer{}, protocol.MCPScope{}, &MCPSettingsError{Server: name, Field: "name",
		Message: fmt.Sprintf("the MCP server %q is not on in this chat", name)}
}

// GetMCPPrompt renders a prompt of one of a chat's servers with its arguments, for
// the composer. Errors: *MCPSettingsError; a sidecar error (agent_unavailable when the
// server failed or refused).
func (area *MCPArea) GetMCPPrompt(ctx context.Context, sessionID, server, name string, args map[string]string) (MCPPromptText, error) {
	s := area.s
	srv, scope, err := s.chatServer(ctx, sessionID, server)
	if err != nil {
		return MCPPromptText{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, mcpFetchTimeout)
	defer cancel()
	var res protocol.MCPPromptGetResult
	if err := s.Sidecar.Call(cctx, protocol.MethodMCPPromptGet, protocol.MCPPromptGetParams{MCPScope: scope, Server: srv, Name: name, Arguments: args}, nil, &res); err != nil {
		return MCPPromptText{}, err
	}
	return MCPPromptText{Server: server, Name: name, Description: res.Description, Text: s.Vault.RedactString(res.Text)}, nil
}

// ReadMCPResource reads a resource of one of a chat's servers, to attach to a message.
// Errors: *MCPSettingsError; a sidecar error.
func (area *MCPArea) ReadMCPResource(ctx context.Context, sessionID, server, uri string) (protocol.MCPResourceReadResult, error) {
	s := area.s
	srv, scope, err := s.chatServer(ctx, sessionID, server)
	if err != nil {
		return protocol.MCPResourceReadResult{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, mcpFetchTimeout)
	defer cancel()
	var res protocol.MCPResourceReadResult
	if err := s.Sidecar.Call(cctx, protocol.MethodMCPResourceRead, protocol.MCPResourceReadParams{MCPScope: scope, Server: srv, URI: uri}, nil, &res); err != nil {
		return protocol.MCPResourceReadResult{}, err
	}
	return res, nil
}
