package backend

import "net/http"

// OAuthHTTPClientForTest is an HTTP client with the sign-in's redirect policy
// (oauthRedirectPolicy), for backend_test.
func OAuthHTTPClientForTest() *http.Client {
	return &http.Client{Timeout: mcpProbeTimeout, CheckRedirect: oauthRedirectPolicy}
}
