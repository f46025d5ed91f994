package backend

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"talaria/backend/vault"
	"talaria/sidecar/protocol"
)

// OAuth for remote MCP servers (docs/using.md, "Signing in to an MCP server"): a
// streamable HTTP or SSE server that answers 401 with a WWW-Authenticate Bearer
// challenge asks for a sign-in. The host does it (it has the keyring and the user's
// browser, and it works the same when the sidecar runs over SSH), with the MCP Go
// SDK's authorization code handler: protected resource metadata (RFC 9728),
// authorization server metadata (RFC 8414), dynamic client registration (RFC 7591),
// PKCE S256 and state, and a loopback redirect http://127.0.0.1:<free port>/callback
// served by a short-lived listener (RFC 8252). The grant (tokens, expiry, the client's
// id and secret, the token endpoint) is kept in the keyring under account
// mcp:<server>:oauth, never in SQLite; the sidecar receives only an Authorization
// header, as a secret header (redacted from frames and the journal like the others).

// The states of a server's sign-in (MCPAuthState.State).
const (
	MCPAuthNone        = "none"          // the server asks for no sign-in (or did not answer)
	MCPAuthSignedIn    = "signed_in"     // a grant is kept and the server accepts it
	MCPAuthNeedsSignIn = "needs_sign_in" // the server answers 401 with a Bearer challenge
	MCPAuthFailed      = "failed"        // the last sign-in failed (Reason says why)
)

// Bounds of the sign-in.
const (
	mcpSignInTimeout = 5 * time.Minute  // for the user to finish in the browser
	mcpProbeTimeout  = 15 * time.Second // one request that asks the server whether it wants a sign-in
	mcpTokenSkew     = 30 * time.Second // a token this close to its expiry is renewed first
)

// MCPAuthState is the sign-in state of an MCP server as Settings shows it. State is
// one of none, signed_in, needs_sign_in, failed; Reason says why for failed and
// needs_sign_in (or what the probe met for none); Expires is when the kept access
// token expires (RFC 3339, "" when unknown or none).
type MCPAuthState struct {
	Server  string `json:"server"`
	State   string `json:"state"`
	Reason  string `json:"reason"`
	Expires string `json:"expires"`
}

// MCPAuthError is a sign-in that cannot start (a stdio server, no browser to open, a
// server that asks for no sign-in); Message says what to do.
type MCPAuthError struct{ Server, Message string }

func (e *MCPAuthError) Error() string { return e.Message }

// mcpGrant is what the keyring keeps of a sign-in (JSON, account mcp:<server>:oauth).
type mcpGrant struct {
	Resource     string           `json:"resource"` // the server's URL the sign-in is for
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	AuthURL      string           `json:"auth_url"`
	TokenURL     string           `json:"token_url"`
	RedirectURL  string           `json:"redirect_url"`
	Scopes       []string         `json:"scopes,omitempty"`
	AccessToken  string           `json:"access_token"`
	RefreshToken string           `json:"refresh_token,omitempty"`
	TokenType    string           `json:"token_type,omitempty"`
	Expiry       time.Time        `json:"expiry,omitzero"`
}

func (g *mcpGrant) config() *oauth2.Config {
	return &oauth2.Config{ClientID: g.ClientID, ClientSecret: g.ClientSecret, RedirectURL: g.RedirectURL, Scopes: g.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: g.AuthURL, TokenURL: g.TokenURL, AuthStyle: g.AuthStyle}}
}

func (g *mcpGrant) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, TokenType: g.TokenType, Expiry: g.Expiry}
}

// mcpAuthKeeper holds what a sign-in leaves besides the grant: the last failure of
// each server (shown until the next sign-in or sign-out), the sign-in under way, and
// each server's grant lock.
type mcpAuthKeeper struct {
	mu       sync.Mutex
	failed   map[string]MCPAuthState
	cancelIn context.CancelFunc       // cancels the sign-in under way (a new one replaces it)
	grants   map[string]*mcpGrantLock // by server
}

// mcpGrantLock is held around a read, renewal and write of a server's grant; waiting
// counts the callers between asking for it and holding it.
type mcpGrantLock struct {
	mu      sync.Mutex
	waiting atomic.Int32
}

// lockGrant takes a server's grant lock and returns its unlock. A renewal holds it
// from reading the grant to keeping the renewed one (at most mcpProbeTimeout on the
// network), so two chats starting at once do not both redeem the same refresh
// token: with refresh-token rotation the second would be refused and forget the
// grant the first just renewed. Sign-in, sign-out and a rename take it too, so a
// renewal in flight never writes back a grant they replaced or forgot.
func (k *mcpAuthKeeper) lockGrant(server string) (unlock func()) {
	l := k.grantLock(server)
	l.waiting.Add(1)
	l.mu.Lock()
	l.waiting.Add(-1)
	return l.mu.Unlock
}

func (k *mcpAuthKeeper) grantLock(server string) *mcpGrantLock {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.grants == nil {
		k.grants = map[string]*mcpGrantLock{}
	}
	l, ok := k.grants[server]
	if !ok {
		l = &mcpGrantLock{}
		k.grants[server] = l
	}
	return l
}

func (k *mcpAuthKeeper) setFailed(server, state, reason string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.failed == nil {
		k.failed = map[string]MCPAuthState{}
	}
	k.failed[server] = MCPAuthState{Server: server, State: state, Reason: reason}
}

func (k *mcpAuthKeeper) clear(server string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.failed, server)
}

func (k *mcpAuthKeeper) lastFailure(server string) (MCPAuthState, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	st, ok := k.failed[server]
	return st, ok
}

// mcpOAuthAccount is the keyring account of a server's sign-in.
func mcpOAuthAccount(server string) string { return "mcp:" + server + ":oauth" }

// readMCPGrant reads a server's kept grant (nil when none). Its tokens are registered
// for redaction.
func (s *Service) readMCPGrant(server string) (*mcpGrant, error) {
	raw, ok, err := s.Vault.Get(mcpOAuthAccount(server))
	if err != nil || !ok || raw == "" {
		return nil, err
	}
	var g mcpGrant
	if err := json.Unmarshal([]byte(raw), &g); err != nil || g.AccessToken == "" {
		return nil, fmt.Errorf("the kept sign-in of %q is unreadable: sign in again", server)
	}
	s.rememberGrant(&g)
	return &g, nil
}

func (s *Service) rememberGrant(g *mcpGrant) {
	for _, v := range []string{g.AccessToken, g.RefreshToken, g.ClientSecret} {
		if v != "" {
			s.Vault.Remember(v)
		}
	}
}

// writeMCPGrant keeps a grant in the keyring. Errors: *vault.UnavailableError when no
// keyring can keep it (it is kept for this run only).
func (s *Service) writeMCPGrant(server string, g *mcpGrant) error {
	s.rememberGrant(g)
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	return s.Vault.Set(mcpOAuthAccount(server), string(b), true)
}

// mcpBearer returns the access token to send to a server at url: the kept one,
// renewed with its refresh token first when it is expired or about to be. "" when
// there is none, or when it was given for another URL (the server's URL was edited
// since: a token never goes to a server it was not given for). A renewal the
// authorization server refuses (renewalRefused), or an expired token without a
// refresh token, forgets the grant and turns the server to needs_sign_in; a renewal
// that fails otherwise (offline, a timeout, a 5xx) keeps the grant, sends no token
// this time and turns the server to failed until a renewal succeeds. Renewals of a
// server are serialized (mcpAuthKeeper.lockGrant): a caller that waited sees the
// token the one before it renewed.
func (s *Service) mcpBearer(ctx context.Context, server, url string) string {
	g, ok := s.keptMCPGrant(server, url)
	if !ok {
		return ""
	}
	if !mcpGrantExpiring(g) {
		return g.AccessToken
	}
	defer s.mcpAuth.lockGrant(server)()
	// Read again under the lock: another caller may have renewed it meanwhile (and
	// its refresh token rotated), or a sign-in or sign-out replaced it.
	if g, ok = s.keptMCPGrant(server, url); !ok {
		return ""
	}
	if !mcpGrantExpiring(g) {
		return g.AccessToken
	}
	if g.RefreshToken == "" {
		s.dropMCPGrant(server, "the sign-in expired and the server gave no way to renew it: sign in again")
		return ""
	}
	cctx, cancel := context.WithTimeout(ctx, mcpProbeTimeout)
	defer cancel()
	cctx = context.WithValue(cctx, oauth2.HTTPClient, &http.Client{Timeout: mcpProbeTimeout, CheckRedirect: sameOriginRedirects})
	old := g.token()
	old.Expiry = time.Now().Add(-time.Minute) // renew now, not at oauth2's own margin
	tok, err := g.config().TokenSource(cctx, old).Token()
	if err != nil {
		cause := s.Vault.RedactString(renewalCause(err))
		s.Log.Info("renewing an MCP server's sign-in failed", "server", server, "err", s.Vault.RedactString(err.Error()))
		if renewalRefused(err) {
			s.dropMCPGrant(server, "the server refused to renew the sign-in ("+cause+"): sign in again")
			return ""
		}
		s.mcpAuth.setFailed(server, MCPAuthFailed, "the sign-in could not be renewed ("+cause+"): check the connection; it is tried again at the next use")
		return ""
	}
	g.AccessToken, g.TokenType, g.Expiry = tok.AccessToken, tok.TokenType, tok.Expiry
	if tok.RefreshToken != "" {
		g.RefreshToken = tok.RefreshToken
	}
	if err := s.writeMCPGrant(server, g); err != nil {
		s.Log.Warn("keeping an MCP server's renewed sign-in", "server", server, "err", s.Vault.RedactString(err.Error()))
	}
	s.mcpAuth.clear(server)
	return g.AccessToken
}

// keptMCPGrant reads a server's grant for mcpBearer: false when there is none, it is
// unreadable or it was given for another URL than url (the last two turn the server
// to needs_sign_in).
func (s *Service) keptMCPGrant(server, url string) (*mcpGrant, bool) {
	g, err := s.readMCPGrant(server)
	if err != nil {
		s.Log.Warn("reading an MCP server's sign-in", "server", server, "err", err)
		s.mcpAuth.setFailed(server, MCPAuthNeedsSignIn, err.Error())
		return nil, false
	}
	if g == nil {
		return nil, false
	}
	if g.Resource != strings.TrimSpace(url) {
		s.mcpAuth.setFailed(server, MCPAuthNeedsSignIn, "the sign-in was for another URL of the server: sign in again")
		return nil, false
	}
	return g, true
}

// mcpGrantExpiring reports whether a grant's access token is expired or within
// mcpTokenSkew of it (a token without an expiry never is).
func mcpGrantExpiring(g *mcpGrant) bool {
	return !g.Expiry.IsZero() && time.Until(g.Expiry) <= mcpTokenSkew
}

// renewalRefused reports whether a failed renewal is the authorization server
// refusing the refresh token or the client itself (RFC 6749 5.2): an error response
// invalid_grant (the refresh token is expired, revoked or already used) or
// invalid_client (the registration is gone), or a 400 or 401 without an error code.
// Only then is the grant forgotten; anything else (offline, DNS, a timeout, a 5xx, a
// redirect) may pass, and the grant is kept for the next use.
func renewalRefused(err error) bool {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return false
	}
	switch re.ErrorCode {
	case "invalid_grant", "invalid_client":
		return true
	case "":
		return re.Response != nil && (re.Response.StatusCode == http.StatusBadRequest || re.Response.StatusCode == http.StatusUnauthorized)
	}
	return false
}

// renewalCause says in one line why a renewal failed: the authorization server's
// status and error code, or the error (unredacted: the caller redacts).
func renewalCause(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		cause := "the authorization server answered " + re.Response.Status
		if re.ErrorCode != "" {
			cause += " " + re.ErrorCode
		}
		return cause
	}
	return err.Error()
}

// dropMCPGrant forgets a server's grant (the caller holds its grant lock) and turns
// the server to needs_sign_in with reason.
func (s *Service) dropMCPGrant(server, reason string) {
	_ = s.Vault.Delete(mcpOAuthAccount(server))
	s.mcpAuth.setFailed(server, MCPAuthNeedsSignIn, reason)
}

// withMCPBearer adds a server's sign-in to its wire form as a secret Authorization
// header (a header the user set themselves wins).
func (s *Service) withMCPBearer(ctx context.Context, w protocol.MCPServer) protocol.MCPServer {
	if w.Transport == protocol.MCPTransportStdio {
		return w
	}
	for k := range w.Headers {
		if strings.EqualFold(k, "Authorization") {
			return w
		}
	}
	tok := s.mcpBearer(ctx, w.Name, w.URL)
	if tok == "" {
		return w
	}
	h := make(map[string]string, len(w.Headers)+1)
	for k, v := range w.Headers {
		h[k] = v
	}
	h["Authorization"] = "Bearer " + tok
	w.Headers = h
	w.SecretKeys = append(append([]string(nil), w.SecretKeys...), "Authorization")
	return w
}

// forgetMCPOAuth drops a removed server's sign-in, or moves it to its new name.
func (s *Service) forgetMCPOAuth(old string, renamedTo *MCPServerConfig) {
	unlock := s.mcpAuth.lockGrant(old)
	g, err := s.readMCPGrant(old)
	_ = s.Vault.Delete(mcpOAuthAccount(old))
	s.mcpAuth.clear(old)
	unlock()
	if renamedTo != nil && err == nil && g != nil {
		unlock = s.mcpAuth.lockGrant(renamedTo.Name)
		_ = s.writeMCPGrant(renamedTo.Name, g)
		unlock()
	}
}

// mcpServerNamed returns a saved remote server. Errors: *MCPSettingsError for an
// unknown server, *MCPAuthError for a stdio one.
func (s *Service) mcpServerNamed(ctx context.Context, name string) (MCPServerConfig, error) {
	list, err := s.readMCPServers(ctx)
	if err != nil {
		return MCPServerConfig{}, err
	}
	for _, c := range list {
		if c.Name == name {
			if c.Transport == protocol.MCPTransportStdio {
				return c, &MCPAuthError{Server: name, Message: fmt.Sprintf("%q runs on this computer (stdio): only remote HTTP servers take a sign-in", name)}
			}
			return c, nil
		}
	}
	return MCPServerConfig{}, &MCPSettingsError{Server: name, Field: "name", Message: fmt.Sprintf("there is no MCP server named %q", name)}
}

// mcpProbeClient sends the probes of Settings' sign-in state and of a sign-in: a
// probe follows no redirect (it carries the server's secret headers and bearer, which
// must not reach another host, nor be sent again in the clear), the redirect itself
// is its answer.
var mcpProbeClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// probeMCP sends a server the first request a client sends (initialize for streamable
// HTTP, the event stream's GET for SSE) with its headers as the sidecar would, and
// returns the request and the answer (its body unread; the caller closes it).
func (s *Service) probeMCP(ctx context.Context, w protocol.MCPServer) (*http.Request, *http.Response, error) {
	var req *http.Request
	var err error
	if w.Transport == protocol.MCPTransportSSE {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSpace(w.URL), nil)
		if err == nil {
			req.Header.Set("Accept", "text/event-stream")
		}
	} else {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"talaria","version":"probe"}}}`
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSpace(w.URL), strings.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
	}
	if err != nil {
		return nil, nil, err
	}
	for k, v := range w.Headers {
		req.Header.Set(k, v)
	}
	resp, err := mcpProbeClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	return req, resp, nil
}

// endProbeSession ends the session a probe's initialize opened on a streamable HTTP
// server (DELETE with its Mcp-Session-Id), so asking for the state leaves nothing open.
func (s *Service) endProbeSession(w protocol.MCPServer, resp *http.Response) {
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" || w.Transport == protocol.MCPTransportSSE {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, strings.TrimSpace(w.URL), nil)
	if err != nil {
		return
	}
	for k, v := range w.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Mcp-Session-Id", id)
	if r, err := mcpProbeClient.Do(req); err == nil {
		r.Body.Close()
	}
}

// asksSignIn reports whether a response is a 401 with a Bearer challenge.
func asksSignIn(resp *http.Response) bool {
	if resp.StatusCode != http.StatusUnauthorized {
		return false
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return true
		}
	}
	return false
}

// MCPServerAuth returns a remote server's sign-in state (Settings' MCP list): it asks
// the server with the kept sign-in, if any. Errors: *MCPSettingsError for an unknown
// server, *MCPAuthError for a stdio server.
func (area *MCPArea) MCPServerAuth(ctx context.Context, name string) (MCPAuthState, error) {
	s := area.s
	c, err := s.mcpServerNamed(ctx, name)
	if err != nil {
		return MCPAuthState{Server: name, State: MCPAuthNone}, err
	}
	w := s.withMCPBearer(ctx, s.resolveMCP(c))
	_, signedIn := w.Headers["Authorization"]
	signedIn = signedIn && !userHeader(c, "Authorization")
	pctx, cancel := context.WithTimeout(ctx, mcpProbeTimeout)
	defer cancel()
	_, resp, perr := s.probeMCP(pctx, w)
	if perr == nil {
		defer resp.Body.Close()
		defer s.endProbeSession(w, resp)
	}
	st := MCPAuthState{Server: name, State: MCPAuthNone}
	switch {
	case perr == nil && asksSignIn(resp):
		st.State = MCPAuthNeedsSignIn
		if signedIn {
			st.Reason = "the server no longer accepts the sign-in: sign in again"
		} else if f, ok := s.mcpAuth.lastFailure(name); ok {
			st.State, st.Reason = f.State, f.Reason
		} else {
			st.Reason = "the server asks for a sign-in"
		}
	case signedIn:
		st.State = MCPAuthSignedIn
		if perr == nil && resp.StatusCode >= 400 {
			st.Reason = fmt.Sprintf("the server answered %s to the kept sign-in: if its tools fail, sign out and sign in again", resp.Status)
		}
		if g, _ := s.readMCPGrant(name); g != nil && !g.Expiry.IsZero() {
			st.Expires = g.Expiry.UTC().Format(time.RFC3339)
		}
	case perr != nil:
		st.Reason = s.Vault.RedactString(perr.Error())
	}
	return st, nil
}

// userHeader reports whether the user configured header name on the server.
func userHeader(c MCPServerConfig, name string) bool {
	for _, h := range c.Headers {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// SignInMCPServer signs in to a remote MCP server that asks for it: it discovers the
// server's authorization server, registers Talaria there when the server offers
// registration, opens the user's browser (Service.OpenBrowser) at the authorization
// URL and waits (up to 5 minutes) for the redirect to a loopback listener, exchanges
// the code and keeps the grant in the keyring; the server's running instances stop so
// the next use connects with it. A sign-in that fails returns the state failed with
// the reason (and no error); a new sign-in cancels one under way. Errors:
// *MCPSettingsError (unknown server), *MCPAuthError (stdio server, no browser, a
// server that asks for no sign-in), *vault.UnavailableError after signing in when no
// keyring keeps the grant (it is kept for this run only).
func (area *MCPArea) SignInMCPServer(ctx context.Context, name string) (MCPAuthState, error) {
	s := area.s
	c, err := s.mcpServerNamed(ctx, name)
	if err != nil {
		return MCPAuthState{Server: name, State: MCPAuthNone}, err
	}
	if s.OpenBrowser == nil {
		return MCPAuthState{Server: name, State: MCPAuthNone}, &MCPAuthError{Server: name, Message: "no browser can be opened here: sign in from the desktop app"}
	}
	ctx, cancel := context.WithTimeout(ctx, mcpSignInTimeout)
	defer cancel()
	s.mcpAuth.mu.Lock()
	if s.mcpAuth.cancelIn != nil {
		s.mcpAuth.cancelIn()
	}
	s.mcpAuth.cancelIn = cancel
	s.mcpAuth.mu.Unlock()

	failed := func(err error) (MCPAuthState, error) {
		reason := s.Vault.RedactString(err.Error())
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			reason = "the sign-in was not finished in the browser in time (or another sign-in replaced it): try again"
		}
		s.mcpAuth.setFailed(name, MCPAuthFailed, reason)
		s.Log.Info("MCP sign-in failed", "server", name, "reason", reason)
		return MCPAuthState{Server: name, State: MCPAuthFailed, Reason: reason}, nil
	}
	// The server's own 401 starts the discovery (its resource_metadata).
	w := s.resolveMCP(c)
	pctx, pcancel := context.WithTimeout(ctx, mcpProbeTimeout)
	defer pcancel()
	req, resp, err := s.probeMCP(pctx, w)
	if err != nil {
		return failed(fmt.Errorf("the server did not answer: %w", err))
	}
	if !asksSignIn(resp) {
		resp.Body.Close()
		return MCPAuthState{Server: name, State: MCPAuthNone}, &MCPAuthError{Server: name,
			Message: fmt.Sprintf("%q asks for no sign-in (it answered %s without a Bearer challenge)", name, resp.Status)}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		resp.Body.Close()
		return failed(fmt.Errorf("no loopback port for the browser's redirect: %w", err))
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	results := make(chan *auth.AuthorizationResult, 1)
	refusals := make(chan error, 1)
	// The state the authorization URL carries: the listener answers only a redirect
	// that returns it, so another page that finds the port cannot end the sign-in
	// with a forged code or error (RFC 6749 10.12; RFC 8252 8.9).
	var expect struct {
		sync.Mutex
		state string
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(rw, r)
			return
		}
		q := r.URL.Query()
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		expect.Lock()
		want := expect.state
		expect.Unlock()
		if got := q.Get("state"); want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			rw.WriteHeader(http.StatusBadRequest)
			io.WriteString(rw, "Talaria: this is not the sign-in under way (its state does not match). Start the sign-in again from Settings.\n") //nolint:errcheck
			return
		}
		if e := q.Get("error"); e != "" {
			select {
			case refusals <- fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description")):
			default:
			}
			io.WriteString(rw, "Talaria: the sign-in was refused. You can close this tab.\n") //nolint:errcheck
			return
		}
		select {
		case results <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}:
		default:
		}
		io.WriteString(rw, "Talaria: signed in. You can close this tab.\n") //nolint:errcheck
	})}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	defer srv.Close()

	var grant *mcpGrant
	hc := &http.Client{Timeout: mcpProbeTimeout, CheckRedirect: sameOriginRedirects}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "Talaria", ClientURI: "https://github.com/talaria",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			// A desktop app keeps no secret from its user: a public client, its
			// code protected by PKCE (RFC 8252, 8.4).
			TokenEndpointAuthMethod: "none"}},
		RedirectURL:         redirect,
		RequestRefreshToken: true,
		Client:              hc,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := url.Parse(args.URL)
			if err != nil || u.Query().Get("state") == "" {
				return nil, fmt.Errorf("the authorization URL carries no state: %q", args.URL)
			}
			if err := browsableAuthURL(u); err != nil {
				return nil, err
			}
			expect.Lock()
			expect.state = u.Query().Get("state")
			expect.Unlock()
			if err := s.OpenBrowser(args.URL); err != nil {
				return nil, fmt.Errorf("the browser could not be opened: %w", err)
			}
			select {
			case r := <-results:
				return r, nil
			case err := <-refusals:
				return nil, err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		NewTokenSource: func(_ context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			grant = &mcpGrant{Resource: strings.TrimSpace(c.URL), ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, AuthStyle: cfg.Endpoint.AuthStyle,
				AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL, RedirectURL: cfg.RedirectURL, Scopes: cfg.Scopes,
				AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: tok.TokenType, Expiry: tok.Expiry}
			s.rememberGrant(grant)
			return oauth2.StaticTokenSource(tok), nil
		},
	})
	if err != nil {
		resp.Body.Close()
		return failed(err)
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return failed(err)
	}
	if grant == nil || grant.AccessToken == "" {
		return failed(errors.New("the authorization server gave no access token"))
	}
	unlock := s.mcpAuth.lockGrant(name)
	keyErr := s.writeMCPGrant(name, grant)
	unlock()
	var ue *vault.UnavailableError
	if keyErr != nil && !errors.As(keyErr, &ue) {
		return failed(fmt.Errorf("the sign-in could not be kept in the keyring: %w", keyErr))
	}
	s.mcpAuth.clear(name)
	s.stopMCP(context.WithoutCancel(ctx), name)
	s.Log.Info("MCP server signed in", "server", name)
	st := MCPAuthState{Server: name, State: MCPAuthSignedIn}
	if !grant.Expiry.IsZero() {
		st.Expires = grant.Expiry.UTC().Format(time.RFC3339)
	}
	return st, keyErr
}

// SignOutMCPServer forgets a server's sign-in (its tokens and client registration
// leave the keyring) and stops its running instances. Errors: *MCPSettingsError for an
// unknown server, *MCPAuthError for a stdio server.
func (area *MCPArea) SignOutMCPServer(ctx context.Context, name string) error {
	s := area.s
	if _, err := s.mcpServerNamed(ctx, name); err != nil {
		return err
	}
	unlock := s.mcpAuth.lockGrant(name)
	err := s.Vault.Delete(mcpOAuthAccount(name))
	unlock()
	if err != nil {
		return err
	}
	s.mcpAuth.clear(name)
	s.stopMCP(ctx, name)
	s.Log.Info("MCP server signed out", "server", name)
	return nil
}

// browsableAuthURL refuses an authorization URL the browser must not be sent to: only
// https, or http to a loopback address (a local authorization server), is opened. The
// URL comes from the server's metadata, and the system's opener hands any other scheme
// (file:, smb:, a custom protocol) to whatever handles it. Errors: a plain error
// naming the URL's scheme.
func browsableAuthURL(u *url.URL) error {
	switch {
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http":
		h := u.Hostname()
		if ip := net.ParseIP(h); h == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return fmt.Errorf("the server's authorization address is not a web address this app opens (%s://): only https, or http on this computer, is opened", u.Scheme)
}
