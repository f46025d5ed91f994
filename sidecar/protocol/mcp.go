package protocol

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

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

// WarningMCP is the warning type of an MCP server a turn could not use (it did not
// start, or did not list its tools): the turn goes on without its tools.
const WarningMCP = "mcp"

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
	Transport string `json:"transport" ts:"McpTransport"` // MCPTransportStdio, MCPTransportHTTP or MCPTransportSSE
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
	Sandbox string `json:"sandbox,omitempty" ts:"McpSandbox"`
	// WritablePaths are absolute folders (or files) a sandboxed stdio server may change
	// beside the workspace and its own folder (docs/sandbox.md, "MCP servers"): the
	// user's answer to a refused write.
	WritablePaths []string `json:"writable_paths,omitempty"`
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
	Structured json.RawMessage `json:"structured,omitempty" ts:"Record<string, unknown>"`
}

// MCPScope is where servers run: the chat's workspace and sandbox policy (the same as
// chat.start's), for the mcp.* methods.
type MCPScope struct {
	Workspace string         `json:"workspace"`
	Sandbox   *SandboxPolicy `json:"sandbox,omitempty"`
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
	InputSchema json.RawMessage `json:"input_schema,omitempty" ts:"Record<string, unknown>"`
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
	Name          string `json:"name"`
	OK            bool   `json:"ok"`
	Error         string `json:"error,omitempty"`
	Hint          string `json:"hint,omitempty"`
	Stderr        string `json:"stderr,omitempty"`
	ServerName    string `json:"server_name,omitempty"` // the server's own name (serverInfo)
	ServerVersion string `json:"server_version,omitempty"`
	Protocol      string `json:"protocol,omitempty"` // the MCP protocol version agreed
	Instructions  string `json:"instructions,omitempty"`
	// Writable are the folders a sandboxed stdio server may change beside the
	// workspace: its own folder, its working folder when that lies inside the workspace
	// or its own folder, its writable_paths (mcp.inspect; docs/sandbox.md).
	Writable []string `json:"writable,omitempty"`
	// Withheld are the folders a sandboxed stdio server would have had as its own or
	// working folder but keeps read-only, with why (a git repository, the home folder,
	// a settings folder, a Python virtual environment, a working folder outside the
	// workspace): the user may still name one in writable_paths (mcp.inspect).
	Withheld  []MCPWithheldFolder `json:"withheld,omitempty"`
	Tools     []MCPToolInfo       `json:"tools"`
	Prompts   []MCPPromptInfo     `json:"prompts"`
	Resources []MCPResourceInfo   `json:"resources"`
	TookMS    int64               `json:"took_ms"`
}

// MCPWithheldFolder is a folder the sandbox keeps read-only for a stdio server although
// it is its own or working folder: Path (absolute) and Reason, a sentence such as "it
// is a git repository (it holds .git), whose hooks and settings run outside the
// sandbox" (docs/sandbox.md, "MCP servers").
type MCPWithheldFolder struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
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

// MCPNameRE is what a server name must match: letters, digits, '-' and single '_', at
// most 32 bytes, starting with a letter or digit. The name prefixes the server's tools
// (<name>__<tool>), so "__" may not appear in it.
var MCPNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// mcpEnvNameRE is what an environment variable name of a stdio server must match.
var mcpEnvNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// mcpHeaderNameRE is an HTTP header field name (RFC 9110 token).
var mcpHeaderNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// MCPConfigError says a server's settings cannot be used as they are; Field names the
// setting ("name", "command", "url", "env", "headers", "cwd", "transport", "sandbox").
type MCPConfigError struct{ Server, Field, Message string }

func (e *MCPConfigError) Error() string {
	if e.Server == "" {
		return e.Message
	}
	return fmt.Sprintf("MCP server %q: %s", e.Server, e.Message)
}

// ValidateMCPServer checks one server's settings: its name, transport, command or URL,
// the names of its environment variables and headers. Errors: *MCPConfigError.
func ValidateMCPServer(s MCPServer) error {
	bad := func(field, format string, args ...any) error {
		return &MCPConfigError{Server: s.Name, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if !MCPNameRE.MatchString(s.Name) || strings.Contains(s.Name, "__") {
		return bad("name", "the name %q must be 1 to 32 letters, digits, '-' or '_' (not '__'), starting with a letter or digit", trimText(s.Name, 40))
	}
	switch s.Transport {
	case MCPTransportStdio:
		if strings.TrimSpace(s.Command) == "" {
			return bad("command", "no command is set: enter the program that starts the server (e.g. npx, uvx, node)")
		}
		if strings.ContainsRune(s.Command, 0) {
			return bad("command", "the command contains a NUL byte")
		}
		for _, a := range s.Args {
			if strings.ContainsRune(a, 0) {
				return bad("command", "an argument contains a NUL byte")
			}
		}
		for k, v := range s.Env {
			if !mcpEnvNameRE.MatchString(k) {
				return bad("env", "%q is not an environment variable name", trimText(k, 40))
			}
			if strings.ContainsRune(v, 0) {
				return bad("env", "the value of %s contains a NUL byte", k)
			}
		}
		if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
			return bad("cwd", "the working folder %q is not an absolute path", trimText(s.Cwd, 200))
		}
		for _, w := range s.WritablePaths {
			if !filepath.IsAbs(w) || strings.ContainsRune(w, 0) {
				return bad("writable_paths", "the writable folder %q is not an absolute path", trimText(w, 200))
			}
			if filepath.Clean(w) == "/" {
				return bad("writable_paths", "the whole filesystem cannot be a writable folder: choose \"no sandbox\" for the server instead")
			}
		}
		switch s.Sandbox {
		case MCPSandboxChat, MCPSandboxNetwork, MCPSandboxOff:
		default:
			return bad("sandbox", "sandbox must be \"\" (the chat's), %q or %q, not %q", MCPSandboxNetwork, MCPSandboxOff, trimText(s.Sandbox, 40))
		}
	case MCPTransportHTTP, MCPTransportSSE:
		u, err := url.Parse(strings.TrimSpace(s.URL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url", "%q is not an http(s) URL: enter the server's endpoint, e.g. http://127.0.0.1:3001/mcp", trimText(s.URL, 200))
		}
		for k, v := range s.Headers {
			if !mcpHeaderNameRE.MatchString(k) {
				return bad("headers", "%q is not a header name", trimText(k, 40))
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return bad("headers", "the value of the header %s contains a line break", k)
			}
		}
	default:
		return bad("transport", "the transport must be stdio, http or sse, not %q", trimText(s.Transport, 40))
	}
	return nil
}

// trimText cuts s to at most n bytes (on a rune boundary), marking the cut.
func trimText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
