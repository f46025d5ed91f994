//go:build linux

package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"talaria/backend"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
)

// Renewing a kept MCP sign-in: only the authorization server refusing the refresh
// token forgets the grant; an unreachable or failing token endpoint keeps it; two uses
// at once redeem the refresh token once.

// renewAuthServer is an authorization server's token endpoint with refresh-token
// rotation (RFC 6749 10.4; OAuth 2.1 4.3.1): each refresh token is good once, a reused
// one is answered 400 invalid_grant. It is also the resource (the MCP server's URL,
// /mcp): it answers 200 to a request with an access token it issued and not yet
// replaced, else 401 with a Bearer challenge, as a server that asks for a sign-in.
type renewAuthServer struct {
	*httptest.Server
	mu        sync.Mutex
	refresh   string // the one refresh token it accepts
	access    string // the access token the resource accepts
	refreshes int    // refresh requests seen (answered or not)
	issued    int
	// script, when set, answers a refresh request instead (status, body); its
	// entries are used in turn, then the endpoint answers normally.
	script []scriptedAnswer
	// hold, when set, runs before the first good refresh is answered (after the
	// refresh token is used up), on the handler's goroutine.
	hold func()
}

type scriptedAnswer struct {
	status int
	body   string
}

func newRenewAuthServer(t *testing.T, refresh string) *renewAuthServer {
	t.Helper()
	a := &renewAuthServer{refresh: refresh}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

func (a *renewAuthServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/mcp":
		a.mu.Lock()
		ok := a.access != "" && r.Header.Get("Authorization") == "Bearer "+a.access
		a.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	case "/token":
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("client_id") != "talaria-test" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		a.refreshes++
		if len(a.script) > 0 {
			s := a.script[0]
			a.script = a.script[1:]
			a.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(s.status)
			fmt.Fprint(w, s.body)
			return
		}
		if r.PostForm.Get("refresh_token") != a.refresh {
			a.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"the refresh token was already used"}`)
			return
		}
		a.issued++
		a.refresh = fmt.Sprintf("rt-rotated-%d-x9f3k2", a.issued)
		a.access = fmt.Sprintf("at-renewed-%d-q7w2e8", a.issued)
		body, _ := json.Marshal(map[string]any{"access_token": a.access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": a.refresh})
		hold := a.hold
		a.hold = nil
		a.mu.Unlock()
		if hold != nil {
			hold()
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body) //nolint:errcheck
	default:
		http.NotFound(w, r)
	}
}

func (a *renewAuthServer) counts() (refreshes int, refresh, access string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refreshes, a.refresh, a.access
}

// expiredGrant is a kept sign-in of the server at resource whose access token expired,
// renewed at tokenURL (client id talaria-test, sent in the form).
func expiredGrant(resource, tokenURL, refresh string) string {
	b, _ := json.Marshal(map[string]any{"resource": resource, "client_id": "talaria-test", "token_url": tokenURL,
		"auth_style": 1, "access_token": "at-expired-m4n5b6", "refresh_token": refresh, "token_type": "Bearer",
		"expiry": "2020-01-01T00:00:00Z"})
	return string(b)
}

// An expired sign-in whose token endpoint cannot be reached (offline) or fails (503)
// is kept, and Settings says it could not be renewed; the next use renews it.
func TestMCPOAuthRenewalUnreachableKeepsTheGrant(t *testing.T) {
	kr := vault.NewMemoryKeyring()
	h, _, _ := mcpHarness(t, func(o *backend.Options) { o.Keyring = kr })
	ctx := context.Background()
	as := newRenewAuthServer(t, "rt-first-p0o9i8")
	h.addServer(protocol.MCPServer{Name: "r", Transport: protocol.MCPTransportHTTP, URL: as.URL + "/mcp"}, nil)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // nothing listens there any more

	grant := expiredGrant(as.URL+"/mcp", deadURL+"/token", "rt-first-p0o9i8")
	if err := kr.Set(vault.Service, "mcp:r:oauth", grant); err != nil {
		t.Fatal(err)
	}
	st, err := h.Svc.MCP().MCPServerAuth(ctx, "r")
	if err != nil || st.State != backend.MCPAuthFailed || !strings.Contains(st.Reason, "could not be renewed") || !strings.Contains(st.Reason, "connection refused") {
		t.Fatalf("auth with the token endpoint unreachable = %+v, %v", st, err)
	}
	if strings.Contains(st.Reason, "rt-first") || strings.Contains(st.Reason, "at-expired") {
		t.Fatalf("the reason holds a token: %q", st.Reason)
	}
	if kept, err := kr.Get(vault.Service, "mcp:r:oauth"); err != nil || kept != grant {
		t.Fatalf("the grant after an unreachable token endpoint = %q, %v; want it kept as it was", kept, err)
	}

	// Back online, the endpoint answers 503 once: still kept, still failed.
	grant = expiredGrant(as.URL+"/mcp", as.URL+"/token", "rt-first-p0o9i8")
	if err := kr.Set(vault.Service, "mcp:r:oauth", grant); err != nil {
		t.Fatal(err)
	}
	as.mu.Lock()
	as.script = []scriptedAnswer{{http.StatusServiceUnavailable, ""}}
	as.mu.Unlock()
	st, err = h.Svc.MCP().MCPServerAuth(ctx, "r")
	if err != nil || st.State != backend.MCPAuthFailed || !strings.Contains(st.Reason, "503") {
		t.Fatalf("auth with the token endpoint answering 503 = %+v, %v", st, err)
	}
	if kept, err := kr.Get(vault.Service, "mcp:r:oauth"); err != nil || kept != grant {
		t.Fatalf("the grant after a 503 = %q, %v; want it kept as it was", kept, err)
	}
	// The next use renews it: signed in, the failure gone, the rotated tokens kept.
	st, err = h.Svc.MCP().MCPServerAuth(ctx, "r")
	if err != nil || st.State != backend.MCPAuthSignedIn || st.Reason != "" || st.Expires == "" {
		t.Fatalf("auth once the token endpoint answers = %+v, %v", st, err)
	}
	n, refresh, access := as.counts()
	kept, _ := kr.Get(vault.Service, "mcp:r:oauth")
	if n != 2 || !strings.Contains(kept, `"refresh_token":"`+refresh+`"`) || !strings.Contains(kept, `"access_token":"`+access+`"`) {
		t.Fatalf("after renewing: %d refreshes, kept %s", n, kept)
	}
}

// The authorization server refusing the refresh token or the client (invalid_grant,
// invalid_client, a bare 400 or 401) forgets the grant and asks for a sign-in; any
// other answer (a 5xx, another error code) keeps it.
func TestMCPOAuthRenewalRefusedForgetsTheGrant(t *testing.T) {
	kr := vault.NewMemoryKeyring()
	h, _, _ := mcpHarness(t, func(o *backend.Options) { o.Keyring = kr })
	ctx := context.Background()
	as := newRenewAuthServer(t, "rt-current-z1x2c3")
	h.addServer(protocol.MCPServer{Name: "r", Transport: protocol.MCPTransportHTTP, URL: as.URL + "/mcp"}, nil)
	for _, c := range []struct {
		name    string
		answer  *scriptedAnswer // nil: the endpoint's own answer to a used refresh token
		dropped bool
	}{
		{"a used refresh token (invalid_grant)", nil, true},
		{"invalid_client", &scriptedAnswer{http.StatusUnauthorized, `{"error":"invalid_client"}`}, true},
		{"a bare 400", &scriptedAnswer{http.StatusBadRequest, `not json`}, true},
		{"a bare 401", &scriptedAnswer{http.StatusUnauthorized, ``}, true},
		{"a 500 server_error", &scriptedAnswer{http.StatusInternalServerError, `{"error":"server_error"}`}, false},
		{"temporarily_unavailable", &scriptedAnswer{http.StatusBadRequest, `{"error":"temporarily_unavailable"}`}, false},
		{"a 502 without a body", &scriptedAnswer{http.StatusBadGateway, ``}, false},
	} {
		grant := expiredGrant(as.URL+"/mcp", as.URL+"/token", "rt-used-already-v5b6n7")
		if err := kr.Set(vault.Service, "mcp:r:oauth", grant); err != nil {
			t.Fatal(err)
		}
		as.mu.Lock()
		as.script = nil
		if c.answer != nil {
			as.script = []scriptedAnswer{*c.answer}
		}
		before := as.refreshes
		as.mu.Unlock()
		st, err := h.Svc.MCP().MCPServerAuth(ctx, "r")
		if n, _, _ := as.counts(); n != before+1 {
			t.Fatalf("%s: %d refresh requests, want 1", c.name, n-before)
		}
		kept, kerr := kr.Get(vault.Service, "mcp:r:oauth")
		if c.dropped {
			if err != nil || st.State != backend.MCPAuthNeedsSignIn || !strings.Contains(st.Reason, "refused to renew") {
				t.Errorf("%s: auth = %+v, %v; want needs_sign_in, refused to renew", c.name, st, err)
			}
			if kerr == nil {
				t.Errorf("%s: a grant the server refused to renew is still kept", c.name)
			}
			continue
		}
		if err != nil || st.State != backend.MCPAuthFailed || !strings.Contains(st.Reason, "could not be renewed") {
			t.Errorf("%s: auth = %+v, %v; want failed, could not be renewed", c.name, st, err)
		}
		if kerr != nil || kept != grant {
			t.Errorf("%s: the grant = %q, %v; want it kept as it was", c.name, kept, kerr)
		}
	}
}

// Two uses of an expired sign-in at once (two chats starting, Settings asking) redeem
// its refresh token once: the second waits for the first's renewal and uses its token,
// so a server that rotates refresh tokens never sees the used one again (it would
// answer invalid_grant, and the grant would be forgotten).
func TestMCPOAuthConcurrentRenewalsRedeemOnce(t *testing.T) {
	kr := vault.NewMemoryKeyring()
	h, _, _ := mcpHarness(t, func(o *backend.Options) { o.Keyring = kr })
	ctx := context.Background()
	as := newRenewAuthServer(t, "rt-first-l1k2j3")
	h.addServer(protocol.MCPServer{Name: "r", Transport: protocol.MCPTransportHTTP, URL: as.URL + "/mcp"}, nil)
	if err := kr.Set(vault.Service, "mcp:r:oauth", expiredGrant(as.URL+"/mcp", as.URL+"/token", "rt-first-l1k2j3")); err != nil {
		t.Fatal(err)
	}
	// The first renewal is answered only once the other use has found the grant
	// expired too: it waits for the grant's lock, or (a use that does not wait) it
	// sends its own refresh request.
	held := make(chan bool, 1)
	as.mu.Lock()
	as.hold = func() {
		held <- testwait.Until(func() bool {
			n, _, _ := as.counts()
			return backend.MCPGrantWaitersForTest(h.Svc, "r") >= 1 || n >= 2
		})
	}
	as.mu.Unlock()

	states := make([]backend.MCPAuthState, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			states[i], errs[i] = h.Svc.MCP().MCPServerAuth(ctx, "r")
		}()
	}
	wg.Wait()
	if !testwait.Recv(t, held, "the first renewal to be answered") {
		t.Fatal("the other use neither waited nor renewed")
	}
	for i, st := range states {
		if errs[i] != nil || st.State != backend.MCPAuthSignedIn {
			t.Errorf("use %d: auth = %+v, %v; want signed_in", i, st, errs[i])
		}
	}
	n, refresh, access := as.counts()
	if n != 1 {
		t.Errorf("the token endpoint saw %d refreshes, want 1", n)
	}
	kept, err := kr.Get(vault.Service, "mcp:r:oauth")
	if err != nil || !strings.Contains(kept, `"refresh_token":"`+refresh+`"`) || !strings.Contains(kept, `"access_token":"`+access+`"`) {
		t.Errorf("the kept grant = %q, %v; want the renewed one (refresh %s)", kept, err, refresh)
	}
}
