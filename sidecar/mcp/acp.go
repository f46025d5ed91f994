package mcp

import (
	acp "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
)

// ACPServers converts a chat's MCP servers (chat.start's mcp_servers) into the
// mcpServers of ACP's session/new, session/load and session/resume, for an agent whose
// initialize answer advertised caps: stdio servers always (every ACP agent must take
// them), http and sse ones only when the agent supports that transport (the others are
// returned in skipped, so the runtime can say so). Environment variables and headers
// are sorted by name. The agent runs the servers itself (unconfined by Talaria's
// sandbox) and asks about their tools itself. The result is never nil (ACP requires
// the member).
func ACPServers(servers []protocol.MCPServer, caps acp.McpCapabilities) (out []acp.McpServer, skipped []string) {
	out = []acp.McpServer{}
	for _, s := range servers {
		switch s.Transport {
		case protocol.MCPTransportStdio:
			env := []acp.EnvVariable{}
			for _, kv := range sortedPairs(s.Env) {
				env = append(env, acp.EnvVariable{Name: kv[0], Value: kv[1]})
			}
			args := s.Args
			if args == nil {
				args = []string{}
			}
			out = append(out, acp.McpServer{Stdio: &acp.McpServerStdio{Name: s.Name, Command: s.Command, Args: args, Env: env}})
		case protocol.MCPTransportHTTP:
			if !caps.Http {
				skipped = append(skipped, s.Name)
				continue
			}
			out = append(out, acp.McpServer{Http: &acp.McpServerHttpInline{Type: "http", Name: s.Name, Url: s.URL, Headers: headers(s)}})
		case protocol.MCPTransportSSE:
			if !caps.Sse {
				skipped = append(skipped, s.Name)
				continue
			}
			out = append(out, acp.McpServer{Sse: &acp.McpServerSseInline{Type: "sse", Name: s.Name, Url: s.URL, Headers: headers(s)}})
		default:
			skipped = append(skipped, s.Name)
		}
	}
	return out, skipped
}

func headers(s protocol.MCPServer) []acp.HttpHeader {
	out := []acp.HttpHeader{}
	for _, kv := range sortedPairs(s.Headers) {
		out = append(out, acp.HttpHeader{Name: kv[0], Value: kv[1]})
	}
	return out
}
