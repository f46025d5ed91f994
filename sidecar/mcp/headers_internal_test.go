package mcp

import (
	"net/http"
	"testing"
)

type recordingTripper struct{ got map[string]string }

func (r *recordingTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got[req.URL.String()] = req.Header.Get("Authorization")
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

// A server's headers go to its own scheme and host only: not to another host or port,
// nor to its host over http when it is https.
func TestHeaderTransportKeepsSchemeAndHost(t *testing.T) {
	rec := &recordingTripper{got: map[string]string{}}
	h := &headerTransport{base: rec, headers: map[string]string{"Authorization": "Bearer tok"}, scheme: "https", host: "mcp.example.com"}
	for _, u := range []string{"https://mcp.example.com/mcp", "https://MCP.example.com/mcp", "http://mcp.example.com/mcp", "https://mcp.example.com:8443/mcp", "https://evil.example.com/mcp"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if _, err := h.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"https://mcp.example.com/mcp": "Bearer tok", "https://MCP.example.com/mcp": "Bearer tok",
		"http://mcp.example.com/mcp": "", "https://mcp.example.com:8443/mcp": "", "https://evil.example.com/mcp": ""}
	for u, w := range want {
		if rec.got[u] != w {
			t.Errorf("%s got Authorization %q, want %q", u, rec.got[u], w)
		}
	}
}
