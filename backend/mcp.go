package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"talaria/backend/vault"
	"talaria/sidecar/protocol"
)

// MCP servers (docs/protocol.md, "MCP servers"): the user's servers are one JSON array
// in the settings (keyMCPServers) with the values of secret environment variables and
// headers kept in the keyring (account mcp:<server>:env:<NAME> or
// mcp:<server>:header:<Name>), never in SQLite. Each server is on in every chat
// (Enabled) or off, and a chat can turn one on or off for itself (ChatOptions'
// mcp_servers). The enabled servers go with every chat.start, their secrets resolved;
// the built-in runtime runs them, Hermes uses its own profile's servers instead, and
// ACP agents get them in session/new.

const keyMCPServers = "mcp.servers"

// Limits of the MCP settings.
const (
	maxMCPServers   = 64
	maxMCPVars      = 64       // environment variables or headers of one server
	maxMCPValue     = 16 << 10 // one value, bytes
	maxMCPArgs      = 256
	maxMCPImport    = 1 << 20 // the pasted JSON, bytes
	mcpTestTimeout  = 45 * time.Second
	mcpListTimeout  = 45 * time.Second
	mcpFetchTimeout = 60 * time.Second
)

// MCPVar is one environment variable (stdio) or header (HTTP) of a server. A secret's
// Value is kept in the keyring and never returned: reading gives Value "" with HasValue
// true; saving Value "" keeps the stored one.
type MCPVar struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Secret   bool   `json:"secret"`
	HasValue bool   `json:"has_value"`
}

// MCPServerConfig is one MCP server as Settings shows and edits it. Transport is stdio
// (Command, Args, Env, Cwd), http (streamable HTTP: URL, Headers) or sse (the older
// HTTP+SSE transport). Enabled turns it on in every chat (a chat may override it);
// AllowReadOnly lets its tools that declare readOnlyHint run without asking; Sandbox is
// "" (the chat's sandbox policy), "network" (the chat's policy with network access) or
// "off" (no sandbox, for a server the user trusts). WritablePaths are absolute folders a
// sandboxed stdio server may change beside the workspace and its own folder
// (docs/sandbox.md, "MCP servers").
type MCPServerConfig struct {
	Name          string   `json:"name"`
	Transport     string   `json:"transport" ts:"McpTransport"`
	Command       string   `json:"command"`
	Args          []string `json:"args"`
	Env           []MCPVar `json:"env"`
	Cwd           string   `json:"cwd"`
	URL           string   `json:"url"`
	Headers       []MCPVar `json:"headers"`
	Enabled       bool     `json:"enabled"`
	AllowReadOnly bool     `json:"allow_read_only"`
	Sandbox       string   `json:"sandbox" ts:"McpSandbox"`
	DisabledTools []string `json:"disabled_tools"`
	WritablePaths []string `json:"writable_paths"`
}

// MCPSettingsError is returned for server settings that cannot be saved; Field names
// the setting (name, command, url, env, headers, cwd, transport, sandbox, writable_paths,
// import).
type MCPSettingsError struct{ Server, Field, Message string }

func (e *MCPSettingsError) Error() string { return e.Message }

// mcpSecretAccount is the keyring account of a secret variable of a server.
func mcpSecretAccount(server, kind, name string) string {
	return "mcp:" + server + ":" + kind + ":" + name
}

// secretName guesses whether a variable holds a secret from its name (imports mark
// these secret; the user can change it).
var secretName = regexp.MustCompile(`(?i)(token|secret|passw|pwd|api[_-]?key|apikey|access[_-]?key|private|credential|auth|session|cookie|bearer|^pat$|_pat$|^key$|_key$)`)

func normVars(vars []MCPVar) []MCPVar {
	out := make([]MCPVar, 0, len(vars))
	for _, v := range vars {
		v.Name = strings.TrimSpace(v.Name)
		if v.Name == "" && v.Value == "" {
			continue
		}
		out = append(out, v)
	}
	return out
}

// readMCPServers reads the stored list (secret values absent).
func (s *Service) readMCPServers(ctx context.Context) ([]MCPServerConfig, error) {
	raw, ok, err := s.Store.Setting(ctx, keyMCPServers)
	if err != nil || !ok || strings.TrimSpace(raw) == "" {
		return []MCPServerConfig{}, err
	}
	var list []MCPServerConfig
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return []MCPServerConfig{}, fmt.Errorf("the saved MCP servers are unreadable (%v); saving a server rewrites them", err)
	}
	return list, nil
}

func (s *Service) writeMCPServers(ctx context.Context, list []MCPServerConfig) error {
	stored := make([]MCPServerConfig, len(list))
	for i, c := range list {
		c.Env, c.Headers = blankSecrets(c.Env), blankSecrets(c.Headers)
		stored[i] = c
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return err
	}
	return s.Store.SetSetting(ctx, keyMCPServers, string(b))
}

func blankSecrets(vars []MCPVar) []MCPVar {
	out := make([]MCPVar, len(vars))
	for i, v := range vars {
		if v.Secret {
			v.Value = ""
		}
		v.HasValue = false
		out[i] = v
	}
	return out
}

// ListMCPServers returns the MCP servers as Settings shows them: secret values left
// out, HasValue saying whether the keyring holds one.
func (area *MCPArea) ListMCPServers(ctx context.Context) ([]MCPServerConfig, error) {
	s := area.s
	list, err := s.readMCPServers(ctx)
	for i := range list {
		s.markSecrets(&list[i])
	}
	return list, err
}

func (s *Service) markSecrets(c *MCPServerConfig) {
	mark := func(kind string, vars []MCPVar) {
		for i := range vars {
			if vars[i].Secret {
				_, vars[i].HasValue, _ = s.Vault.Get(mcpSecretAccount(c.Name, kind, vars[i].Name))
				vars[i].Value = ""
			} else {
				vars[i].HasValue = vars[i].Value != ""
			}
		}
	}
	mark("env", c.Env)
	mark("header", c.Headers)
	if c.Args == nil {
		c.Args = []string{}
	}
	if c.Env == nil {
		c.Env = []MCPVar{}
	}
	if c.Headers == nil {
		c.Headers = []MCPVar{}
	}
	if c.DisabledTools == nil {
		c.DisabledTools = []string{}
	}
	if c.WritablePaths == nil {
		c.WritablePaths = []string{}
	}
}

// normalize trims a config and checks it against the wire rules. Errors:
// *MCPSettingsError.
func normalizeMCP(c MCPServerConfig) (MCPServerConfig, error) {
	c.Name = strings.TrimSpace(c.Name)
	c.Transport = strings.TrimSpace(strings.ToLower(c.Transport))
	c.Command = strings.TrimSpace(c.Command)
	c.URL = strings.TrimSpace(c.URL)
	c.Cwd = strings.TrimSpace(c.Cwd)
	c.Env, c.Headers = normVars(c.Env), normVars(c.Headers)
	var paths []string
	for _, p := range c.WritablePaths {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(paths, filepath.Clean(p)) {
			paths = append(paths, filepath.Clean(p))
		}
	}
	c.WritablePaths = paths
	if c.Transport == protocol.MCPTransportStdio {
		c.URL, c.Headers = "", nil
	} else {
		c.Command, c.Args, c.Env, c.Cwd, c.Sandbox, c.WritablePaths = "", nil, nil, "", "", nil
	}
	bad := func(field, msg string) error { return &MCPSettingsError{Server: c.Name, Field: field, Message: msg} }
	switch {
	case len(c.Args) > maxMCPArgs:
		return c, bad("command", fmt.Sprintf("at most %d arguments", maxMCPArgs))
	case len(c.WritablePaths) > maxMCPArgs:
		return c, bad("writable_paths", fmt.Sprintf("at most %d writable folders", maxMCPArgs))
	case len(c.Env) > maxMCPVars || len(c.Headers) > maxMCPVars:
		return c, bad("env", fmt.Sprintf("at most %d environment variables or headers", maxMCPVars))
	case len(c.Command) > 4096 || len(c.URL) > 4096 || len(c.Cwd) > 4096:
		return c, bad("command", "the command, URL or folder is longer than 4096 characters")
	}
	seen := map[string]bool{}
	for _, v := range append(slices.Clone(c.Env), c.Headers...) {
		if len(v.Value) > maxMCPValue {
			return c, bad("env", fmt.Sprintf("the value of %s is longer than %d KiB", v.Name, maxMCPValue>>10))
		}
		if seen[strings.ToLower(v.Name)] {
			return c, bad("env", fmt.Sprintf("%s is set twice", v.Name))
		}
		seen[strings.ToLower(v.Name)] = true
	}
	// The wire rules (name, transport, command, URL, names of variables and headers).
	if err := protocol.ValidateMCPServer(toWireMCP(c, nil)); err != nil {
		var ce *protocol.MCPConfigError
		if errors.As(err, &ce) {
			return c, &MCPSettingsError{Server: c.Name, Field: ce.Field, Message: ce.Message}
		}
		return c, err
	}
	return c, nil
}

// toWireMCP is a config as chat.start sends it, with secret values from secrets
// (account -> value; nil leaves them empty).
func toWireMCP(c MCPServerConfig, secret func(kind, name string) string) protocol.MCPServer {
	w := protocol.MCPServer{Name: c.Name, Transport: c.Transport, Command: c.Command, Args: c.Args, Cwd: c.Cwd, URL: c.URL,
		AllowReadOnly: c.AllowReadOnly, Sandbox: c.Sandbox, DisabledTools: c.DisabledTools, WritablePaths: c.WritablePaths}
	fill := func(kind string, vars []MCPVar) map[string]string {
		if len(vars) == 0 {
			return nil
		}
		m := map[string]string{}
		for _, v := range vars {
			val := v.Value
			if v.Secret {
				w.SecretKeys = append(w.SecretKeys, v.Name)
				if secret != nil {
					val = secret(kind, v.Name)
				}
			}
			m[v.Name] = val
		}
		return m
	}
	w.Env = fill("env", c.Env)
	w.Headers = fill("header", c.Headers)
	return w
}

// resolve is the wire form of a stored config with its secrets read from the keyring
// (a secret the keyring lacks is sent empty; the server will say what it misses).
func (s *Service) resolveMCP(c MCPServerConfig) protocol.MCPServer {
	return toWireMCP(c, func(kind, name string) string {
		v, _, err := s.Vault.Get(mcpSecretAccount(c.Name, kind, name))
		if err != nil {
			s.Log.Warn("reading an MCP server's secret", "server", c.Name, "name", name, "err", err)
		}
		return v
	})
}

// SaveMCPServer adds or replaces a server. previous is the name it had ("" for a new
// one; a rename moves its secrets and forgets its approvals). A secret variable with an
// empty Value keeps the value the keyring holds. Running instances of the server stop
// (it starts again, with the new settings, at its next use). Errors:
// *MCPSettingsError; a *vault.UnavailableError after everything else was saved when no
// keyring can keep the secrets (they are kept for this run only).
func (area *MCPArea) SaveMCPServer(ctx context.Context, in MCPServerConfig, previous string) (MCPServerConfig, error) {
	s := area.s
	c, err := normalizeMCP(in)
	if err != nil {
		return MCPServerConfig{}, err
	}
	previous = strings.TrimSpace(previous)
	list, err := s.readMCPServers(ctx)
	if err != nil {
		s.Log.Warn("MCP servers unreadable; starting a new list", "err", err)
	}
	idx := slices.IndexFunc(list, func(x MCPServerConfig) bool { return x.Name == previous })
	if previous == "" {
		idx = -1
	}
	if other := slices.IndexFunc(list, func(x MCPServerConfig) bool { return x.Name == c.Name }); other >= 0 && other != idx {
		return MCPServerConfig{}, &MCPSettingsError{Server: c.Name, Field: "name", Message: fmt.Sprintf("a server named %q exists already: choose another name", c.Name)}
	}
	if idx < 0 && len(list) >= maxMCPServers {
		return MCPServerConfig{}, &MCPSettingsError{Server: c.Name, Field: "name", Message: fmt.Sprintf("at most %d MCP servers", maxMCPServers)}
	}
	var old *MCPServerConfig
	if idx >= 0 {
		o := list[idx]
		old = &o
	}
	keyErr := s.storeMCPSecrets(c, old)
	if idx >= 0 {
		list[idx] = c
	} else {
		list = append(list, c)
	}
	if err := s.writeMCPServers(ctx, list); err != nil {
		return MCPServerConfig{}, err
	}
	if old != nil && old.Name != c.Name {
		s.forgetMCPServer(ctx, *old, &c)
	}
	s.stopMCP(ctx, c.Name, previous)
	s.Log.Info("MCP server saved", "server", c.Name, "transport", c.Transport, "enabled", c.Enabled)
	out := c
	s.markSecrets(&out)
	return out, keyErr
}

// storeMCPSecrets writes a config's secret values to the keyring (keeping the old
// server's value for a secret left empty) and removes those no longer secret or gone.
func (s *Service) storeMCPSecrets(c MCPServerConfig, old *MCPServerConfig) error {
	var keyErr error
	keep := map[string]bool{}
	for _, kind := range []string{"env", "header"} {
		vars := c.Env
		if kind == "header" {
			vars = c.Headers
		}
		for _, v := range vars {
			if !v.Secret {
				continue
			}
			acct := mcpSecretAccount(c.Name, kind, v.Name)
			keep[acct] = true
			val := v.Value
			if val == "" && old != nil {
				val, _, _ = s.Vault.Get(mcpSecretAccount(old.Name, kind, v.Name))
			}
			if val == "" {
				continue
			}
			if err := s.Vault.Set(acct, val, true); err != nil {
				var ue *vault.UnavailableError
				if !errors.As(err, &ue) {
					s.Log.Warn("keeping an MCP secret failed", "server", c.Name, "name", v.Name, "err", err)
				}
				keyErr = err
			}
		}
	}
	if old != nil {
		for _, kind := range []string{"env", "header"} {
			vars := old.Env
			if kind == "header" {
				vars = old.Headers
			}
			for _, v := range vars {
				if acct := mcpSecretAccount(old.Name, kind, v.Name); v.Secret && !keep[acct] {
					_ = s.Vault.Delete(acct)
				}
			}
		}
	}
	return keyErr
}

// forgetMCPServer drops what belongs to a removed or renamed server: its secrets
// (unless renamed, which moved them), its always-allowed approvals, the chats' choices.
func (s *Service) forgetMCPServer(ctx context.Context, old MCPServerConfig, renamedTo *MCPServerConfig) {
	if renamedTo == nil {
		for _, v := range old.Env {
			if v.Secret {
				_ = s.Vault.Delete(mcpSecretAccount(old.Name, "env", v.Name))
			}
		}
		for _, v := range old.Headers {
			if v.Secret {
				_ = s.Vault.Delete(mcpSecretAccount(old.Name, "header", v.Name))
			}
		}
	}
	s.forgetMCPOAuth(old.Name, renamedTo)
	rules, _ := s.Approvals().GetAllowlist(ctx)
	for _, r := range rules {
		if strings.HasPrefix(r.Pattern, "mcp:"+old.Name+"/") {
			_ = s.Approvals().RemoveAllowlist(ctx, r.Pattern)
		}
	}
}

// DeleteMCPServer removes a server, its secrets and its always-allowed approvals, and
// stops its running instances. No error when there is no such server.
func (area *MCPArea) DeleteMCPServer(ctx context.Context, name string) error {
	s := area.s
	list, err := s.readMCPServers(ctx)
	if err != nil {
		return err
	}
	idx := slices.IndexFunc(list, func(x MCPServerConfig) bool { return x.Name == name })
	if idx < 0 {
		return nil
	}
	old := list[idx]
	list = slices.Delete(list, idx, idx+1)
	if err := s.writeMCPServers(ctx, list); err != nil {
		return err
	}
	s.forgetMCPServer(ctx, old, nil)
	s.stopMCP(ctx, name)
	s.Log.Info("MCP server removed", "server", name)
	return nil
}

// SetMCPServerEnabled turns a server on or off for every chat that has not chosen for
// itself. Errors: *MCPSettingsError for an unknown server.
func (area *MCPArea) SetMCPServerEnabled(ctx context.Context, name string, on bool) error {
	s := area.s
	list, err := s.readMCPServers(ctx)
	if err != nil {
		return err
	}
	idx := slices.IndexFunc(list, func(x MCPServerConfig) bool { return x.Name == name })
	if idx < 0 {
		return &MCPSettingsError{Server: name, Field: "name", Message: fmt.Sprintf("there is no MCP server named %q", name)}
	}
	list[idx].Enabled = on
	return s.writeMCPServers(ctx, list)
}

// stopMCP asks the built-in runtime to stop the running instances of servers.
func (s *Service) stopMCP(ctx context.Context, names ...string) {
	var keep []string
	for _, n := range names {
		if n != "" && !slices.Contains(keep, n) {
			keep = append(keep, n)
		}
	}
	if len(keep) == 0 || s.Sidecar == nil {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var res protocol.MCPStopResult
	if err := s.Sidecar.Call(cctx, protocol.MethodMCPStop, protocol.MCPStopParams{Names: keep}, nil, &res); err != nil {
		s.Log.Info("mcp.stop failed (the servers stop when idle)", "err", err)
	}
}

// mcpScope is where a chat's servers run: its workspace and sandbox policy, as its
// turns send them ("" for Settings' defaults).
func (s *Service) mcpScope(ctx context.Context, sessionID string) (protocol.MCPScope, error) {
	st, err := s.Settings().GetSettings(ctx)
	if err != nil {
		return protocol.MCPScope{}, err
	}
	scope := protocol.MCPScope{Workspace: st.Workspace}
	if sessionID == "" {
		if p, err := s.useWorkspace(st.Workspace); err == nil {
			scope.Workspace = p
		}
		def, err := s.Agents().DefaultSandbox(ctx)
		if err != nil {
			return scope, err
		}
		scope.Sandbox = &protocol.SandboxPolicy{Mode: def.Mode, Network: def.Network, HiddenPaths: []string{s.Paths.DataDir}}
		return scope, nil
	}
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return scope, err
	}
	if sess.Workspace != "" {
		scope.Workspace = sess.Workspace
		// The chat's MCP servers start there: the default folder is made now if need be.
		if p, err := s.useWorkspace(sess.Workspace); err == nil {
			scope.Workspace = p
		}
	}
	scope.Sandbox, err = s.sandboxPolicy(ctx, sessionID)
	return scope, err
}

// TestMCPServer connects to a server as given (saved or not; a secret left empty uses
// the one kept for the server named previous) and reports its tools, prompts and
// resources, or why it failed (Settings' "Test"). It runs under Settings' default
// sandbox policy and workspace. Errors: *MCPSettingsError for settings that cannot be
// used; a sidecar error.
func (area *MCPArea) TestMCPServer(ctx context.Context, in MCPServerConfig, previous string) (protocol.MCPServerReport, error) {
	s := area.s
	c, err := normalizeMCP(in)
	if err != nil {
		return protocol.MCPServerReport{}, err
	}
	from := strings.TrimSpace(previous)
	if from == "" {
		from = c.Name
	}
	wire := toWireMCP(c, func(kind, name string) string {
		for _, v := range append(slices.Clone(c.Env), c.Headers...) {
			if v.Name == name && v.Value != "" {
				return v.Value
			}
		}
		val, _, _ := s.Vault.Get(mcpSecretAccount(from, kind, name))
		return val
	})
	if g := s.withMCPBearer(ctx, protocol.MCPServer{Name: from, Transport: wire.Transport, URL: wire.URL, Headers: wire.Headers}); g.Headers["Authorization"] != "" && wire.Headers["Authorization"] == "" {
		wire.Headers, wire.SecretKeys = g.Headers, append(wire.SecretKeys, "Authorization")
	}
	for _, v := range append(slices.Clone(c.Env), c.Headers...) {
		if v.Secret && v.Value != "" {
			s.Vault.Remember(v.Value) // typed, not saved yet: redacted like a kept one
		}
	}
	scope, err := s.mcpScope(ctx, "")
	if err != nil {
		return protocol.MCPServerReport{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, mcpTestTimeout)
	defer cancel()
	var rep protocol.MCPServerReport
	if err := s.Sidecar.Call(cctx, protocol.MethodMCPInspect, protocol.MCPInspectParams{MCPScope: scope, Server: wire}, nil, &rep); err != nil {
		return protocol.MCPServerReport{}, err
	}
	return rep, nil
}
