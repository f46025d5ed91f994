package app

import (
	"fmt"

	"talaria/backend"
	"talaria/sidecar/protocol"
)

// MCP is bound to the window: the user's MCP servers (saved, tested, imported) and
// the servers, prompts and resources of one chat.
type MCP struct{ app *App }

// MCP servers: Settings' list (add, edit, remove, import, test), a chat's own on/off,
// and the prompts and resources of a chat's servers for the composer.

// ListMCPServers returns the MCP servers (secret values left out).
func (mc *MCP) ListMCPServers() ([]backend.MCPServerConfig, error) {
	out, err := mc.app.service().MCP().ListMCPServers(mc.app.bg())
	return lists(out), userError(err)
}

// SaveMCPServer adds (previous "") or replaces the server named previous.
func (mc *MCP) SaveMCPServer(in backend.MCPServerConfig, previous string) (backend.MCPServerConfig, error) {
	out, err := mc.app.service().MCP().SaveMCPServer(mc.app.bg(), in, previous)
	return lists(out), userError(err)
}

// DeleteMCPServer removes a server with its secrets and approvals.
func (mc *MCP) DeleteMCPServer(name string) error {
	return userError(mc.app.service().MCP().DeleteMCPServer(mc.app.bg(), name))
}

// SetMCPServerEnabled turns a server on or off for every chat that did not choose.
func (mc *MCP) SetMCPServerEnabled(name string, on bool) error {
	return userError(mc.app.service().MCP().SetMCPServerEnabled(mc.app.bg(), name, on))
}

// ImportMCPServers adds the servers of a pasted {"mcpServers": {...}} configuration.
func (mc *MCP) ImportMCPServers(text string) (backend.MCPImportResult, error) {
	out, err := mc.app.service().MCP().ImportMCPServers(mc.app.bg(), text)
	return lists(out), userError(err)
}

// TestMCPServer connects to a server as given and lists its tools, prompts and
// resources.
func (mc *MCP) TestMCPServer(in backend.MCPServerConfig, previous string) (protocol.MCPServerReport, error) {
	out, err := mc.app.service().MCP().TestMCPServer(mc.app.bg(), in, previous)
	return lists(out), userError(err)
}

// GetChatMCP returns a chat's MCP menu: its servers, on or off in the chat.
func (mc *MCP) GetChatMCP(sessionID string) (backend.ChatMCP, error) {
	out, err := mc.app.service().MCP().GetChatMCP(mc.app.bg(), sessionID)
	return lists(out), userError(err)
}

// SetChatMCPServer turns a server "on" or "off" in one chat, or back to the "default"
// (the global setting).
func (mc *MCP) SetChatMCPServer(sessionID, name, state string) (backend.ChatMCP, error) {
	var on *bool
	switch state {
	case "on", "off":
		v := state == "on"
		on = &v
	case "default":
	default:
		return backend.ChatMCP{}, invalid(fmt.Sprintf("%q is not on, off or default", state))
	}
	out, err := mc.app.service().MCP().SetChatMCPServer(mc.app.bg(), sessionID, name, on)
	return lists(out), userError(err)
}

// ListChatMCP starts a chat's servers when needed and lists their prompts and
// resources.
func (mc *MCP) ListChatMCP(sessionID string) ([]protocol.MCPServerReport, error) {
	out, err := mc.app.service().MCP().ListChatMCP(mc.app.bg(), sessionID)
	return lists(out), userError(err)
}

// GetMCPPrompt renders a prompt of a chat's server for the composer.
func (mc *MCP) GetMCPPrompt(sessionID, server, name string, args map[string]string) (backend.MCPPromptText, error) {
	out, err := mc.app.service().MCP().GetMCPPrompt(mc.app.bg(), sessionID, server, name, args)
	return out, userError(err)
}

// ReadMCPResource reads a resource of a chat's server.
func (mc *MCP) ReadMCPResource(sessionID, server, uri string) (protocol.MCPResourceReadResult, error) {
	out, err := mc.app.service().MCP().ReadMCPResource(mc.app.bg(), sessionID, server, uri)
	return lists(out), userError(err)
}

// MCPServerAuth returns a remote server's sign-in state (signed_in, needs_sign_in,
// failed with the reason, or none).
func (mc *MCP) MCPServerAuth(name string) (backend.MCPAuthState, error) {
	out, err := mc.app.service().MCP().MCPServerAuth(mc.app.bg(), name)
	return out, userError(err)
}

// SignInMCPServer signs in to a remote server in the user's browser (OAuth with PKCE)
// and keeps the sign-in in the keyring; a failed sign-in returns the state failed with
// its reason.
func (mc *MCP) SignInMCPServer(name string) (backend.MCPAuthState, error) {
	out, err := mc.app.service().MCP().SignInMCPServer(mc.app.bg(), name)
	return out, userError(err)
}

// SignOutMCPServer forgets a server's sign-in.
func (mc *MCP) SignOutMCPServer(name string) error {
	return userError(mc.app.service().MCP().SignOutMCPServer(mc.app.bg(), name))
}
