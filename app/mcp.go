package app

import (
	"fmt"

	"talaria/backend"
	"talaria/sidecar/protocol"
)

// MCP servers: Settings' list (add, edit, remove, import, test), a chat's own on/off,
// and the prompts and resources of a chat's servers for the composer.

// ListMCPServers returns the MCP servers (secret values left out).
func (a *App) ListMCPServers() ([]backend.MCPServerConfig, error) {
	out, err := a.service().ListMCPServers(a.bg())
	if out == nil {
		out = []backend.MCPServerConfig{}
	}
	return out, userError(err)
}

// SaveMCPServer adds (previous "") or replaces the server named previous.
func (a *App) SaveMCPServer(in backend.MCPServerConfig, previous string) (backend.MCPServerConfig, error) {
	out, err := a.service().SaveMCPServer(a.bg(), in, previous)
	return out, userError(err)
}

// DeleteMCPServer removes a server with its secrets and approvals.
func (a *App) DeleteMCPServer(name string) error {
	return userError(a.service().DeleteMCPServer(a.bg(), name))
}

// SetMCPServerEnabled turns a server on or off for every chat that did not choose.
func (a *App) SetMCPServerEnabled(name string, on bool) error {
	return userError(a.service().SetMCPServerEnabled(a.bg(), name, on))
}

// ImportMCPServers adds the servers of a pasted {"mcpServers": {...}} configuration.
func (a *App) ImportMCPServers(text string) (backend.MCPImportResult, error) {
	out, err := a.service().ImportMCPServers(a.bg(), text)
	return out, userError(err)
}

// TestMCPServer connects to a server as given and lists its tools, prompts and
// resources.
func (a *App) TestMCPServer(in backend.MCPServerConfig, previous string) (protocol.MCPServerReport, error) {
	out, err := a.service().TestMCPServer(a.bg(), in, previous)
	return out, userError(err)
}

// GetChatMCP returns a chat's MCP menu: its servers, on or off in the chat.
func (a *App) GetChatMCP(sessionID string) (backend.ChatMCP, error) {
	out, err := a.service().GetChatMCP(a.bg(), sessionID)
	return out, userError(err)
}

// SetChatMCPServer turns a server "on" or "off" in one chat, or back to the "default"
// (the global setting).
func (a *App) SetChatMCPServer(sessionID, name, state string) (backend.ChatMCP, error) {
	var on *bool
	switch state {
	case "on", "off":
		v := state == "on"
		on = &v
	case "default":
	default:
		return backend.ChatMCP{}, invalid(fmt.Sprintf("%q is not on, off or default", state))
	}
	out, err := a.service().SetChatMCPServer(a.bg(), sessionID, name, on)
	return out, userError(err)
}

// ListChatMCP starts a chat's servers when needed and lists their prompts and
// resources.
func (a *App) ListChatMCP(sessionID string) ([]protocol.MCPServerReport, error) {
	out, err := a.service().ListChatMCP(a.bg(), sessionID)
	if out == nil {
		out = []protocol.MCPServerReport{}
	}
	return out, userError(err)
}

// GetMCPPrompt renders a prompt of a chat's server for the composer.
func (a *App) GetMCPPrompt(sessionID, server, name string, args map[string]string) (backend.MCPPromptText, error) {
	out, err := a.service().GetMCPPrompt(a.bg(), sessionID, server, name, args)
	return out, userError(err)
}

// ReadMCPResource reads a resource of a chat's server.
func (a *App) ReadMCPResource(sessionID, server, uri string) (protocol.MCPResourceReadResult, error) {
	out, err := a.service().ReadMCPResource(a.bg(), sessionID, server, uri)
	return out, userError(err)
}
