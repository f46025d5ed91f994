package backend

import (
	"errors"
	"net/http"
)

// secretClient sends GETs that carry a secret (the provider's check with its API key).
var secretClient = &http.Client{CheckRedirect: sameOriginRedirects}

// sameOriginRedirects is the CheckRedirect of every HTTP client that sends a secret
// (the sign-in's discovery, registration, token endpoint and renewals; the provider's
// check with its API key): it follows a GET's redirect on the same scheme and host
// only, at most 5, and otherwise hands back the redirect itself, which the caller
// reports as a failure. A secret header or a token request's body (the code, the PKCE
// verifier, the refresh token) so never reaches another host, nor the same host in
// the clear, by a redirect.
func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("the authorization server redirected more than 5 times")
	}
	first := via[0].URL
	if req.Method != http.MethodGet || req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return http.ErrUseLastResponse
	}
	return nil
}
