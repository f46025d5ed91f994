//go:build linux

package backend_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/mcp/mcptest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// oauthDemo is the MCP TypeScript SDK's example server run with --oauth (from npm,
// @modelcontextprotocol/sdk under .cache/mcp-servers): a streamable HTTP MCP server
// that answers 401 with a Bearer challenge, and its demo authorization server (RFC
// 8414 metadata, dynamic registration, PKCE; it issues a code without a login page by
// redirecting at once, and no refresh tokens).
type oauthDemo struct{ URL string }

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func startOAuthDemo(t *testing.T, srv mcptest.Servers) oauthDemo {
	t.Helper()
	script := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(srv.Everything))), "sdk/dist/esm/examples/server/simpleStreamableHttp.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the MCP SDK's example server is missing (%v): run scripts/mcp-setup.sh", err)
	}
	for attempt := 0; attempt < 5; attempt++ {
		mcpPort, authPort := freePort(t), freePort(t)
		cmd := exec.Command(srv.Node, script, "--oauth", "--oauth-strict")
		cmd.Env = append(os.Environ(), fmt.Sprintf("MCP_PORT=%d", mcpPort), fmt.Sprintf("MCP_AUTH_PORT=%d", authPort))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatalf("start the OAuth demo server: %v", err)
		}
		ready := make(chan error, 1)
		go func() {
			sc := bufio.NewScanner(out)
			listening := 0
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.Contains(line, "listening on port"):
					if listening++; listening == 2 {
						ready <- nil
					}
				case strings.Contains(line, "EADDRINUSE"):
					ready <- errors.New(line)
				}
			}
			ready <- errors.New("the OAuth demo server exited before listening")
		}()
		err := testwait.Recv(t, ready, "the OAuth demo server to listen")
		stop := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }
		if err != nil {
			stop()
			t.Logf("attempt %d: %v", attempt, err)
			continue
		}
		t.Cleanup(stop)
		// The resource is named with localhost (the server's own URL, which the
		// protected resource metadata must match).
		return oauthDemo{URL: fmt.Sprintf("http://localhost:%d/mcp", mcpPort)}
	}
	t.Fatal("the OAuth demo server did not start in 5 attempts")
	return oauthDemo{}
}

// followBrowser is the only stand-in of the test: the user's browser, an HTTP client
// that follows the authorization URL's redirects to the loopback listener.
type followBrowser struct {
	mu     sync.Mutex
	opened []string
	final  []string
	errs   []error
}

func (b *followBrowser) open(u string) error {
	resp, err := http.Get(u)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opened = append(b.opened, u)
	if err != nil {
		b.errs = append(b.errs, err)
		return nil // a browser opened; what it met is the flow's business
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	b.final = append(b.final, resp.Request.URL.String()+" "+resp.Status+" "+string(body))
	return nil
}

// grepTree fails the test if any file under the folders holds needle.
func grepTree(t *testing.T, needle string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), needle) {
				t.Errorf("the access token is in %s", p)
			}
			return nil
		})
	}
}

func TestMCPOAuthSignInCallRefreshSignOut(t *testing.T) {
	kr := vault.NewMemoryKeyring()
	h, _, srv := mcpHarness(t, func(o *backend.Options) { o.Keyring = kr })
	ctx := context.Background()
	demo := startOAuthDemo(t, srv)
	h.addServer(protocol.MCPServer{Name: "demo", Transport: protocol.MCPTransportHTTP, URL: demo.URL}, nil)

	// Before signing in: Settings says the server needs it, and Test's hint says where.
	st, err := h.Svc.MCP().MCPServerAuth(ctx, "demo")
	if err != nil || st.State != backend.MCPAuthNeedsSignIn {
		t.Fatalf("auth before sign-in = %+v, %v", st, err)
	}
	list, _ := h.Svc.MCP().ListMCPServers(ctx)
	rep, err := h.Svc.MCP().TestMCPServer(ctx, list[0], "demo")
	if err != nil || rep.OK || !strings.Contains(rep.Hint, "sign in to it in Settings") {
		t.Fatalf("Test before sign-in = %+v, %v", rep, err)
	}
	// A turn's MCP warning says where to sign in, not only that the server said 401.
	h.Provider.Enqueue(providertest.TextTurn("no tools"))
	sid := h.NewSession()
	frames := h.WaitEnd(h.Start(sid, "hello"))
	warned := false
	for _, w := range backendtest.FramesOf(frames, protocol.EvWarning) {
		warned = warned || (w["type"] == protocol.WarningMCP && strings.Contains(w["message"].(string), "sign in to it in Settings"))
	}
	if !warned {
		t.Fatalf("no MCP warning saying to sign in: %v", backendtest.FramesOf(frames, protocol.EvWarning))
	}
	// No browser: the error says so.
	if _, err := h.Svc.MCP().SignInMCPServer(ctx, "demo"); err == nil || !strings.Contains(err.Error(), "browser") {
		t.Fatalf("sign-in without a browser: %v", err)
	}

	b := &followBrowser{}
	h.Svc.OpenBrowser = b.open
	st, err = h.Svc.MCP().SignInMCPServer(ctx, "demo")
	if err != nil || st.State != backend.MCPAuthSignedIn || st.Expires == "" {
		t.Fatalf("sign-in = %+v, %v (browser: %v %v)", st, err, b.final, b.errs)
	}
	if len(b.opened) != 1 || !strings.Contains(b.opened[0], "code_challenge_method=S256") || !strings.Contains(b.opened[0], "state=") ||
		!strings.Contains(b.opened[0], "redirect_uri=http%3A%2F%2F127.0.0.1%3A") || !strings.Contains(b.final[0], "/callback?code=") || !strings.Contains(b.final[0], " 200 OK") {
		t.Fatalf("the browser opened %v and ended at %v", b.opened, b.final)
	}
	raw, err := kr.Get(vault.Service, "mcp:demo:oauth")
	if err != nil {
		t.Fatalf("the grant is not in the keyring: %v", err)
	}
	var grant map[string]any
	if err := json.Unmarshal([]byte(raw), &grant); err != nil {
		t.Fatal(err)
	}
	token, _ := grant["access_token"].(string)
	if len(token) < 16 || grant["client_id"] == "" || grant["token_url"] == "" {
		t.Fatalf("kept grant = %v", grant)
	}
	if st, _ := h.Svc.MCP().MCPServerAuth(ctx, "demo"); st.State != backend.MCPAuthSignedIn {
		t.Fatalf("auth after sign-in = %+v", st)
	}

	// A turn's call of the server's tool goes through with the bearer.
	h.Provider.Enqueue(backendtest.ToolTurn("g1", "demo__greet", map[string]any{"name": "Ada"}), providertest.TextTurn("greeted"))
	s := h.Start(sid, "greet Ada")
	h.answer(s, sid, 1, protocol.ChoiceOnce)
	frames = h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	if d := backendtest.FramesOf(frames, protocol.EvToolComplete); len(d) != 1 || d[0]["is_error"] != false || !strings.Contains(contentText(d[0]), "Hello, Ada") {
		t.Fatalf("greet after sign-in = %v", d)
	}
	// The token is in the keyring only: not in SQLite, the journal or the logs.
	grepTree(t, token, h.Svc.Paths.DataDir, h.Svc.Paths.LogDir)

	// The server's URL edited: the token is not sent to the new URL; back, it is.
	list, _ = h.Svc.MCP().ListMCPServers(ctx)
	moved := list[0]
	moved.URL = strings.Replace(demo.URL, "localhost", "127.0.0.1", 1)
	if _, err := h.Svc.MCP().SaveMCPServer(ctx, moved, "demo"); err != nil {
		t.Fatal(err)
	}
	if st, _ := h.Svc.MCP().MCPServerAuth(ctx, "demo"); st.State != backend.MCPAuthNeedsSignIn || !strings.Contains(st.Reason, "another URL") {
		t.Fatalf("auth after the URL changed = %+v", st)
	}
	moved.URL = demo.URL
	if _, err := h.Svc.MCP().SaveMCPServer(ctx, moved, "demo"); err != nil {
		t.Fatal(err)
	}
	if st, _ := h.Svc.MCP().MCPServerAuth(ctx, "demo"); st.State != backend.MCPAuthSignedIn {
		t.Fatalf("auth with the URL back = %+v", st)
	}

	// A token the server does not know: the demo answers 500 (its verifier throws a
	// plain error, not a 401), and Settings says what to do.
	bad := strings.Replace(raw, token, "not-a-token-the-server-issued", 1)
	if err := kr.Set(vault.Service, "mcp:demo:oauth", bad); err != nil {
		t.Fatal(err)
	}
	if st, _ := h.Svc.MCP().MCPServerAuth(ctx, "demo"); st.State != backend.MCPAuthSignedIn || !strings.Contains(st.Reason, "sign out and sign in again") {
		t.Fatalf("auth with a token the server does not know = %+v", st)
	}
	// An expired token whose renewal fails on the authorization server (the demo
	// issues no refresh tokens and answers a refresh grant 500 server_error): kept,
	// and Settings says it could not be renewed.
	grant["expiry"] = "2001-01-01T00:00:00Z"
	grant["refresh_token"] = "refresh-the-demo-cannot-renew"
	exp, _ := json.Marshal(grant)
	if err := kr.Set(vault.Service, "mcp:demo:oauth", string(exp)); err != nil {
		t.Fatal(err)
	}
	st, _ = h.Svc.MCP().MCPServerAuth(ctx, "demo")
	if st.State != backend.MCPAuthFailed || !strings.Contains(st.Reason, "could not be renewed") || !strings.Contains(st.Reason, "500") {
		t.Fatalf("auth with an expired token the server fails to renew = %+v", st)
	}
	if kept, err := kr.Get(vault.Service, "mcp:demo:oauth"); err != nil || kept != string(exp) {
		t.Fatalf("a grant whose renewal failed on the server's side = %q, %v; want it kept", kept, err)
	}
	// One the server refuses (a client it does not know: 400 invalid_client):
	// forgotten, and the server needs a sign-in.
	grant["client_id"] = "a-client-the-demo-never-registered"
	exp, _ = json.Marshal(grant)
	if err := kr.Set(vault.Service, "mcp:demo:oauth", string(exp)); err != nil {
		t.Fatal(err)
	}
	st, _ = h.Svc.MCP().MCPServerAuth(ctx, "demo")
	if st.State != backend.MCPAuthNeedsSignIn || !strings.Contains(st.Reason, "refused to renew") || !strings.Contains(st.Reason, "invalid_client") {
		t.Fatalf("auth with an expired token = %+v", st)
	}
	if _, err := kr.Get(vault.Service, "mcp:demo:oauth"); err == nil {
		t.Fatal("a grant the server refused to renew is still kept")
	}

	// Sign in again, then sign out: the grant leaves the keyring.
	if st, err := h.Svc.MCP().SignInMCPServer(ctx, "demo"); err != nil || st.State != backend.MCPAuthSignedIn {
		t.Fatalf("second sign-in = %+v, %v", st, err)
	}
	if err := h.Svc.MCP().SignOutMCPServer(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := kr.Get(vault.Service, "mcp:demo:oauth"); err == nil {
		t.Fatal("sign-out left the grant in the keyring")
	}
	if st, _ := h.Svc.MCP().MCPServerAuth(ctx, "demo"); st.State != backend.MCPAuthNeedsSignIn {
		t.Fatalf("auth after sign-out = %+v", st)
	}
	// A stdio server takes no sign-in; an unknown one is named.
	if _, err := h.Svc.MCP().SignInMCPServer(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "no MCP server named") {
		t.Fatalf("sign-in of an unknown server: %v", err)
	}
}

// noSecretService is a keyring that cannot be reached (a headless Linux without a
// Secret Service): go-keyring's error.
type noSecretService struct{}

var errNoSecretService = errors.New("The name org.freedesktop.secrets was not provided by any .service files")

func (noSecretService) Get(string, string) (string, error) { return "", errNoSecretService }
func (noSecretService) Set(string, string, string) error   { return errNoSecretService }
func (noSecretService) Delete(string, string) error        { return errNoSecretService }

func TestMCPOAuthWithoutAKeyringSaysWhatToDo(t *testing.T) {
	h, _, srv := mcpHarness(t, func(o *backend.Options) { o.Keyring = noSecretService{} })
	ctx := context.Background()
	demo := startOAuthDemo(t, srv)
	h.addServer(protocol.MCPServer{Name: "demo", Transport: protocol.MCPTransportHTTP, URL: demo.URL}, nil)
	b := &followBrowser{}
	h.Svc.OpenBrowser = b.open
	st, err := h.Svc.MCP().SignInMCPServer(ctx, "demo")
	var ue *vault.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "gnome-keyring") || st.State != backend.MCPAuthSignedIn {
		t.Fatalf("sign-in without a keyring = %+v, %v", st, err)
	}
	// Kept for this run: the server accepts it.
	if st, _ := h.Svc.MCP().MCPServerAuth(ctx, "demo"); st.State != backend.MCPAuthSignedIn {
		t.Fatalf("auth after a sign-in kept in memory = %+v", st)
	}
}

// Another page that finds the loopback port cannot end a sign-in: a refusal or a code
// without the sign-in's state is answered 400 and the real redirect still signs in.
func TestMCPOAuthCallbackNeedsTheSignInsState(t *testing.T) {
	h, _, srv := mcpHarness(t, func(o *backend.Options) { o.Keyring = vault.NewMemoryKeyring() })
	ctx := context.Background()
	demo := startOAuthDemo(t, srv)
	h.addServer(protocol.MCPServer{Name: "demo", Transport: protocol.MCPTransportHTTP, URL: demo.URL}, nil)
	b := &followBrowser{}
	var forged []string
	h.Svc.OpenBrowser = func(u string) error {
		pu, err := url.Parse(u)
		if err != nil {
			return err
		}
		cb := pu.Query().Get("redirect_uri")
		for _, q := range []string{"error=access_denied", "code=forged", "code=forged&state=guess", "error=access_denied&state="} {
			resp, err := http.Get(cb + "?" + q)
			if err != nil {
				return err
			}
			resp.Body.Close()
			forged = append(forged, fmt.Sprintf("%s %d", q, resp.StatusCode))
		}
		return b.open(u)
	}
	st, err := h.Svc.MCP().SignInMCPServer(ctx, "demo")
	if err != nil || st.State != backend.MCPAuthSignedIn {
		t.Fatalf("sign-in after forged redirects = %+v, %v (forged: %v; browser: %v %v)", st, err, forged, b.final, b.errs)
	}
	if len(forged) != 4 {
		t.Fatalf("forged redirects = %v", forged)
	}
	for _, f := range forged {
		if !strings.HasSuffix(f, " 400") {
			t.Errorf("a forged redirect was answered %s, not 400", f)
		}
	}
}

// The sign-in's HTTP clients never carry a request body (a code, a PKCE verifier, a
// refresh token) to another host by a redirect, and follow a GET's redirect on the
// same host only.
func TestOAuthRedirectPolicy(t *testing.T) {
	other, reached := recordingServer(t, func(r *http.Request) string { return r.Method + " " + r.URL.Path }, 0)
	var self *httptest.Server
	self = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/token":
			http.Redirect(w, r, other.URL+"/token", http.StatusPermanentRedirect)
		case "/meta":
			http.Redirect(w, r, self.URL+"/meta2", http.StatusFound)
		case "/meta-away":
			http.Redirect(w, r, other.URL+"/meta", http.StatusFound)
		default:
			io.WriteString(w, "here") //nolint:errcheck
		}
	}))
	defer self.Close()
	hc := backend.OAuthHTTPClientForTest()
	resp, err := hc.Post(self.URL+"/token", "application/x-www-form-urlencoded", strings.NewReader("code=c&code_verifier=v"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPermanentRedirect {
		t.Errorf("the token POST's redirect was followed: %s", resp.Status)
	}
	resp, err = hc.Get(self.URL + "/meta")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "here" {
		t.Errorf("a same-host GET redirect was not followed: %s %q", resp.Status, body)
	}
	resp, err = hc.Get(self.URL + "/meta-away")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("a GET redirect to another host was followed: %s", resp.Status)
	}
	if got := reached(); len(got) != 0 {
		t.Errorf("the other host was reached: %v", got)
	}
}

// Settings' sign-in probe carries a server's secret headers: it follows no redirect,
// so no other host (nor another port of the same one) gets them.
func TestMCPSignInProbeFollowsNoRedirect(t *testing.T) {
	other, got := recordingServer(t, func(r *http.Request) string { return r.Method + " key=" + r.Header.Get("X-Api-Key") }, 0)
	self := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer self.Close()
	h, _, _ := mcpHarness(t, func(o *backend.Options) { o.Keyring = vault.NewMemoryKeyring() })
	h.addServer(protocol.MCPServer{Name: "r", Transport: protocol.MCPTransportHTTP, URL: self.URL + "/mcp"}, func(c *backend.MCPServerConfig) {
		c.Headers = []backend.MCPVar{{Name: "X-Api-Key", Value: "sekret-123", Secret: true}}
	})
	if _, err := h.Svc.MCP().MCPServerAuth(context.Background(), "r"); err != nil {
		t.Logf("auth state: %v", err)
	}
	if seen := got(); len(seen) != 0 {
		t.Errorf("the probe followed the redirect to another host: %v", seen)
	}
}

// Settings' Test of a signed-in server sends its sign-in's bearer.
func TestMCPTestSendsTheSignInsBearer(t *testing.T) {
	srv, auths := recordingServer(t, func(r *http.Request) string { return r.Header.Get("Authorization") }, http.StatusUnauthorized)
	kr := vault.NewMemoryKeyring()
	h, _, _ := mcpHarness(t, func(o *backend.Options) { o.Keyring = kr })
	c := h.addServer(protocol.MCPServer{Name: "r", Transport: protocol.MCPTransportHTTP, URL: srv.URL + "/mcp"}, nil)
	if err := kr.Set(vault.Service, "mcp:r:oauth", `{"resource":"`+srv.URL+`/mcp","client_id":"c","access_token":"tok-abcdef123456","token_type":"Bearer"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Svc.MCP().TestMCPServer(context.Background(), c, "r"); err != nil {
		t.Logf("test: %v", err)
	}
	sent := false
	for _, a := range auths() {
		sent = sent || a == "Bearer tok-abcdef123456"
	}
	if !sent {
		t.Errorf("Test did not send the sign-in's bearer: %q", auths())
	}
}

// Only https, or http on this computer, is opened as a sign-in's authorization page.
func TestSignInOpensOnlyWebAddresses(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://auth.example.com/authorize?state=x": true,
		"http://127.0.0.1:9000/authorize?state=x":    true,
		"http://localhost:9000/authorize?state=x":    true,
		"http://[::1]:9000/authorize?state=x":        true,
		"http://auth.example.com/authorize?state=x":  false,
		"file://localhost/tmp/x.desktop?state=x":     false,
		"smb://127.0.0.1/share/x?state=x":            false,
		"search-ms://localhost/query?state=x":        false,
		"javascript://localhost/%0aalert(1)?state=x": false,
		"https:///authorize?state=x":                 false,
	} {
		if err := backend.BrowsableAuthURLForTest(u); (err == nil) != ok {
			t.Errorf("%s: err = %v, want opened %v", u, err, ok)
		}
	}
}

// recordingServer is an HTTP server that notes one line per request (what note makes
// of it), then answers with status (200 when 0). seen returns the lines so far.
func recordingServer(t *testing.T, note func(*http.Request) string, status int) (srv *httptest.Server, seen func() []string) {
	t.Helper()
	var mu sync.Mutex
	var lines []string
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lines = append(lines, note(r))
		mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
		}
		io.WriteString(w, "{}") //nolint:errcheck
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(lines) }
}
