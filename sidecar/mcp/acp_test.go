package mcp

import (
	"encoding/json"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
)

func TestACPServers(t *testing.T) {
	servers := []protocol.MCPServer{
		{Name: "fs", Transport: protocol.MCPTransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/w"}, Env: map[string]string{"B": "2", "A": "1"}},
		{Name: "web", Transport: protocol.MCPTransportHTTP, URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer t"}},
		{Name: "old", Transport: protocol.MCPTransportSSE, URL: "https://example.com/sse"},
	}
	out, skipped := ACPServers(servers, acp.McpCapabilities{Http: true})
	if len(out) != 2 || len(skipped) != 1 || skipped[0] != "old" {
		t.Fatalf("out %d, skipped %v", len(out), skipped)
	}
	b, err := json.Marshal(acp.NewSessionRequest{Cwd: "/w", McpServers: out})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cwd":"/w","mcpServers":[{"args":["-y","@modelcontextprotocol/server-filesystem","/w"],"command":"npx","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"name":"fs"},{"headers":[{"name":"Authorization","value":"Bearer t"}],"name":"web","type":"http","url":"https://example.com/mcp"}]}`
	if string(b) != want {
		t.Fatalf("session/new =\n%s\nwant\n%s", b, want)
	}
	if out, _ := ACPServers(nil, acp.McpCapabilities{}); out == nil {
		t.Fatal("nil mcpServers (ACP requires the member)")
	}
}
