package protocol

import "encoding/json"

// Model Context Protocol servers (docs/protocol.md, "MCP servers"). The host keeps the
// user's servers in its settings and sends the ones a chat enables with every
// chat.start (MCPServers); the built-in runtime is their MCP client: it starts them
// lazily, offers their tools to the model as <server>__<tool>, asks approval for every
// call and shows the result on the tool card. The mcp.* methods let the host test a
// server and use its prompts and resources outside a turn. Other runtimes receive the
// same list and hand it to their agent (ACP's session/new mcpServers).

// Methods of the MCP flow, served by the built-in runtime.
const (
	MethodMCPInspect      = "mcp.inspect"       // connect once, list tools, prompts and resources ("Test")
	MethodMCPList         = "mcp.list"          // prompts and resources of running (lazily started) servers
	MethodMCPPromptGet    = "mcp.prompt_get"    // render one prompt
	MethodMCPResourceRead = "mcp.resource_read" // read one resource
	MethodMCPStop         = "mcp.stop"          // stop the running instances of servers (edited or removed)
)

// MCP server transports.
const (
	MCPTransportStdio = "stdio" // a local command speaking MCP on stdin/stdout
	MCPTransportHTTP  = "http"  // streamable HTTP (MCP 2025-03-26 and later)
	MCPTransportSSE   = "sse"   // the older HTTP+SSE transport (MCP 2024-11-05)
)

// MCP server sandbox choices (MCPServer.Sandbox) for stdio servers.
const (
	// MCPSandboxChat (""): the chat's own sandbox policy, exactly as its commands run.
	MCPSandboxChat = ""
	// MCPSandboxNetwork: the chat's policy with network access on (servers that call
	// an API).
	MCPSandboxNetwork = "network"
	// MCPSandboxOff: no confinement, the user's explicit choice for this server.
	MCPSandboxOff = "off"
)

// ToolsetMCP is the enabled_toolsets name of every MCP server's tools. Absent or empty
// enabled_toolsets offer them too; a non-empty list without it offers none.
const ToolsetMCP = "mcp"

// MCPServer is one server as the host sends it: Name is its id (^[A-Za-z0-9][A-Za-z0-9-]*$
// with single underscores allowed, at most 32 bytes; it prefixes its tools' names).
// Secrets in Env and Headers are resolved by the host from the keyring (SecretKeys
// names them); the runtime never logs Env or Headers values.
type MCPServer struct {
	Name      string `json:"name"`
	Transport string `json:"transport"` // MCPTransportStdio, MCPTransportHTTP or MCPTransportSSE
	// stdio: the command, its arguments, extra environment and working folder (absolute;
	// "" is the chat's workspace).
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// http and sse: the endpoint and extra request headers (e.g. Authorization).
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// AllowReadOnly lets tools that declare readOnlyHint run without an approval: the
	// user's choice for this server (annotations are hints a server may get wrong).
	AllowReadOnly bool `json:"allow_read_only,omitempty"`
	// Sandbox is MCPSandboxChat, MCPSandboxNetwork or MCPSandboxOff (stdio only).
	Sandbox string `json:"sandbox,omitempty"`
	// DisabledTools are tool names (as the server names them) never offered.
	DisabledTools []string `json:"disabled_tools,omitempty"`
	// SecretKeys name the Env variables and Headers whose values are secrets (kept in
	// the keyring by the host): the runtime redacts those values from every tool
	// result, frame and error. An Authorization header is always one.
	SecretKeys []string `json:"secret_keys,omitempty"`
}

// MCPAnnotations are a tool's behaviour hints (MCP ToolAnnotations), with the spec's
// defaults applied: destructive and open_world default to true, read_only and
// idempotent to false. They are hints from the server, never a guarantee.
type MCPAnnotations struct {
	ReadOnly    bool `json:"read_only"`
	Destructive bool `json:"destructive"`
	Idempotent  bool `json:"idempotent"`
	OpenWorld   bool `json:"open_world"`
}

// MCPToolRef names an MCP tool on tool and approval frames: the server, the tool as
// the server names it, its display title and annotations.
type MCPToolRef struct {
	Server      string         `json:"server"`
	Tool        string         `json:"tool"`
	Title       string         `json:"title,omitempty"`
	Annotations MCPAnnotations `json:"annotations"`
}

// MCPContent is one content block of an MCP tool result, prompt or resource as the
// window shows it. Type is text, image, audio, resource_link or resource (an embedded
// resource). Data is base64 (image, audio, a binary embedded resource), omitted when
// over the frame's budget (Omitted then says why); Size is the decoded size in bytes.
type MCPContent struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	MIMEType    string `json:"mime_type,omitempty"`
	Data        string `json:"data,omitempty"`
	Size        int64  `json:"size,omitempty"`
	Omitted     string `json:"omitted,omitempty"`
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// MCPToolResult is tool_complete's mcp member: what the server answered.
type MCPToolResult struct {
	Server  string       `json:"server"`
	Tool    string       `json:"tool"`
	IsError bool         `json:"is_error"`
	Content []MCPContent `json:"content"`
	// Structured is the result's structuredContent (bounded), when it had one.
	Structured json.RawMessage `json:"structured,omitempty"`
}

// MCPScope is where servers run: the chat's workspace and sandbox policy (the same as
// chat.start's), for the mcp.* methods.
type MCPScope struct {
	Workspace string          `json:"workspace"`
	Sandbox   json.RawMessage `json:"sandbox,omitempty"` // chat.start's sandbox policy
}

// MCPInspectParams are the params of mcp.inspect: one server, connected afresh and
// closed afterwards (it may not be saved yet).
type MCPInspectParams struct {
	MCPScope
	Server MCPServer `json:"server"`
}

// MCPToolInfo describes one tool of a server.
type MCPToolInfo struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Annotations MCPAnnotations  `json:"annotations"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// MCPPromptArgument is one argument of a prompt.
type MCPPromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// MCPPromptInfo describes one prompt of a server.
type MCPPromptInfo struct {
	Name        string              `json:"name"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description,omitempty"`
	Arguments   []MCPPromptArgument `json:"arguments"`
}

// MCPResourceInfo describes one resource (or, with Template set, a resource template
// whose URI is an RFC 6570 template) of a server. Size is in bytes, 0 when unknown.
type MCPResourceInfo struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mime_type,omitempty"`
	Size        int64  `json:"size,omitempty"`
	Template    bool   `json:"template,omitempty"`
}

// MCPServerReport is what one server offers, or why it could not be reached: OK false
// with Error (what happened), Hint (what to do) and Stderr (the last lines the server
// wrote, secrets redacted).
type MCPServerReport struct {
	Name          string            `json:"name"`
	OK            bool              `json:"ok"`
	Error         string            `json:"error,omitempty"`
	Hint          string            `json:"hint,omitempty"`
	Stderr        string            `json:"stderr,omitempty"`
	ServerName    string            `json:"server_name,omitempty"` // the server's own name (serverInfo)
	ServerVersion string            `json:"server_version,omitempty"`
	Protocol      string            `json:"protocol,omitempty"` // the MCP protocol version agreed
	Instructions  string            `json:"instructions,omitempty"`
	Tools         []MCPToolInfo     `json:"tools"`
	Prompts       []MCPPromptInfo   `json:"prompts"`
	Resources     []MCPResourceInfo `json:"resources"`
	TookMS        int64             `json:"took_ms"`
}

// MCPListParams are the params of mcp.list: the chat's servers, started lazily (the
// same instances its turns use).
type MCPListParams struct {
	MCPScope
	Servers []MCPServer `json:"servers"`
}

// MCPListResult is the result of mcp.list: one report per server, in the order given.
type MCPListResult struct {
	Servers []MCPServerReport `json:"servers"`
}

// MCPPromptGetParams are the params of mcp.prompt_get.
type MCPPromptGetParams struct {
	MCPScope
	Server    MCPServer         `json:"server"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// MCPPromptMessage is one message of a rendered prompt.
type MCPPromptMessage struct {
	Role    string     `json:"role"` // user or assistant
	Content MCPContent `json:"content"`
}

// MCPPromptGetResult is the result of mcp.prompt_get. Text is the messages' text
// joined by blank lines (what the composer takes).
type MCPPromptGetResult struct {
	Description string             `json:"description,omitempty"`
	Messages    []MCPPromptMessage `json:"messages"`
	Text        string             `json:"text"`
}

// MCPResourceReadParams are the params of mcp.resource_read.
type MCPResourceReadParams struct {
	MCPScope
	Server MCPServer `json:"server"`
	URI    string    `json:"uri"`
}

// MCPResourceReadResult is the result of mcp.resource_read: the resource's contents
// (type text or resource; Data is base64 for a binary one).
type MCPResourceReadResult struct {
	Contents []MCPContent `json:"contents"`
}

// MCPStopParams are the params of mcp.stop: the names of servers whose running
// instances stop (nil: every server).
type MCPStopParams struct {
	Names []string `json:"names"`
}

// MCPStopResult is the result of mcp.stop: how many instances stopped.
type MCPStopResult struct {
	Stopped int `json:"stopped"`
}

// Approval kinds (ApprovalData.Kind).
const (
	ApprovalKindCommand = ""    // a dangerous terminal command
	ApprovalKindMCP     = "mcp" // an MCP tool call
)

// ChoiceAlwaysServer answers an MCP approval: allow every tool of this server from now
// on (the host persists the pattern mcp:<server>/*). For an MCP approval ChoiceAlways
// means this tool always, ChoiceSession this tool for the rest of the chat.
const ChoiceAlwaysServer = "always_server"

// MCPPattern is the approval pattern of one MCP tool ("mcp:<server>/<tool>"), and
// MCPServerPattern that of every tool of a server ("mcp:<server>/*"). Both go in the
// approval allowlist like dangerous-command keys.
func MCPPattern(server, tool string) string { return "mcp:" + server + "/" + tool }

// MCPServerPattern is the approval pattern of every tool of server.
func MCPServerPattern(server string) string { return "mcp:" + server + "/*" }
