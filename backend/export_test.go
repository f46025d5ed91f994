package backend

import (
	"net/http"
	"net/url"
)

// OAuthHTTPClientForTest is an HTTP client with the sign-in's redirect policy
// (sameOriginRedirects), for backend_test.
func OAuthHTTPClientForTest() *http.Client {
	return &http.Client{Timeout: mcpProbeTimeout, CheckRedirect: sameOriginRedirects}
}

// BrowsableAuthURLForTest is browsableAuthURL on a URL string, for backend_test.
func BrowsableAuthURLForTest(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return browsableAuthURL(u)
}

// MCPGrantWaitersForTest is how many callers wait for a server's grant lock
// (mcpAuthKeeper.lockGrant), for backend_test.
func MCPGrantWaitersForTest(s *Service, server string) int {
	return int(s.mcpAuth.grantLock(server).waiting.Load())
}
