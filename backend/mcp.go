package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"talaria/backend/core"
	"talaria/backend/store"
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

// MCPImportResult says what an import did: the servers added, those that replaced a
// server of the same name, and the entries skipped with why.
type MCPImportResult struct {
	Added    []string          `json:"added"`
	Replaced []string          `json:"replaced"`
	Skipped  []MCPImportIssue  `json:"skipped"`
	Servers  []MCPServerConfig `json:"servers"` // every server after the import
}

// MCPImportIssue is one entry an import left out.
type MCPImportIssue struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ChatMCPServer is one server as a chat's MCP menu shows it: whether it is on in this
// chat, whether that is the chat's own choice (Override) or the global setting.
type ChatMCPServer struct {
	Name      string `json:"name"`
	Transport string `json:"transport" ts:"McpTransport"`
	On        bool   `json:"on"`
	Global    bool   `json:"global"`   // its global Enabled
	Override  bool   `json:"override"` // the chat chose On itself
}

// ChatMCP is a chat's MCP menu: its servers and a note when the chat's runtime does
// not use them as Talaria runs them (Hermes uses its own profile's servers).
type ChatMCP struct {
	Servers []ChatMCPServer `json:"servers"`
	Note    string          `json:"note"`
	// Used says whether the chat's runtime uses these servers at all.
	Used bool `json:"used"`
}

// MCPPromptText is a rendered prompt of a chat's server, for the composer.
type MCPPromptText struct {
	Server      string `json:"server"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Text        string `json:"text"`
}

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
func (s *Service) ListMCPServers(ctx context.Context) ([]MCPServerConfig, error) {
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
func (s *Service) SaveMCPServer(ctx context.Context, in MCPServerConfig, previous string) (MCPServerConfig, error) {
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
	rules, _ := s.GetAllowlist(ctx)
	for _, r := range rules {
		if strings.HasPrefix(r.Pattern, "mcp:"+old.Name+"/") {
			_ = s.RemoveAllowlist(ctx, r.Pattern)
		}
	}
}

// DeleteMCPServer removes a server, its secrets and its always-allowed approvals, and
// stops its running instances. No error when there is no such server.
func (s *Service) DeleteMCPServer(ctx context.Context, name string) error {
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
func (s *Service) SetMCPServerEnabled(ctx context.Context, name string, on bool) error {
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

// ImportMCPServers reads the JSON other apps keep MCP servers in and adds them:
// Claude Desktop, Cursor, Windsurf, Cline ({"mcpServers": {"<name>": {...}}}), VS Code
// ({"servers": {...}}), or the bare object of servers. Each entry is {command, args,
// env, cwd} for a stdio server or {url, headers, type} for a remote one ("type" http,
// streamable-http, streamableHttp or sse; without it a URL ending in /sse is SSE).
// Names are made valid (spaces and other characters become '-'); a server of the same
// name is replaced; environment variables and headers whose names look like secrets
// (TOKEN, KEY, SECRET, PASSWORD, Authorization ...) go to the keyring. Imported servers
// are enabled unless the entry says "disabled": true. Errors: *MCPSettingsError when
// the text is not such JSON (nothing is changed then).
func (s *Service) ImportMCPServers(ctx context.Context, text string) (MCPImportResult, error) {
	res := MCPImportResult{Added: []string{}, Replaced: []string{}, Skipped: []MCPImportIssue{}}
	if len(text) > maxMCPImport {
		return res, &MCPSettingsError{Field: "import", Message: "the pasted text is over 1 MiB"}
	}
	entries, err := parseMCPImport(text)
	if err != nil {
		return res, err
	}
	list, err := s.readMCPServers(ctx)
	if err != nil {
		s.Log.Warn("MCP servers unreadable; starting a new list", "err", err)
	}
	var keyErr error
	for _, e := range entries {
		if e.issue != "" {
			res.Skipped = append(res.Skipped, MCPImportIssue{Name: e.cfg.Name, Reason: e.issue})
			continue
		}
		c, err := normalizeMCP(e.cfg)
		if err != nil {
			res.Skipped = append(res.Skipped, MCPImportIssue{Name: e.cfg.Name, Reason: err.Error()})
			continue
		}
		idx := slices.IndexFunc(list, func(x MCPServerConfig) bool { return x.Name == c.Name })
		if idx < 0 && len(list) >= maxMCPServers {
			res.Skipped = append(res.Skipped, MCPImportIssue{Name: c.Name, Reason: fmt.Sprintf("at most %d MCP servers", maxMCPServers)})
			continue
		}
		var old *MCPServerConfig
		if idx >= 0 {
			o := list[idx]
			old = &o
			list[idx] = c
			res.Replaced = append(res.Replaced, c.Name)
		} else {
			list = append(list, c)
			res.Added = append(res.Added, c.Name)
		}
		if err := s.storeMCPSecrets(c, old); err != nil {
			keyErr = err
		}
	}
	if len(res.Added)+len(res.Replaced) > 0 {
		if err := s.writeMCPServers(ctx, list); err != nil {
			return res, err
		}
		s.stopMCP(ctx, res.Replaced...)
	}
	s.Log.Info("MCP servers imported", "added", len(res.Added), "replaced", len(res.Replaced), "skipped", len(res.Skipped))
	res.Servers, _ = s.ListMCPServers(ctx)
	return res, keyErr
}

type importEntry struct {
	cfg   MCPServerConfig
	issue string
}

var unsafeServerName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// importName makes a config key a valid server name: other characters become '-',
// "__" becomes "_", at most 32 bytes.
func importName(key string) string {
	n := unsafeServerName.ReplaceAllString(strings.TrimSpace(key), "-")
	for strings.Contains(n, "__") {
		n = strings.ReplaceAll(n, "__", "_")
	}
	n = strings.Trim(n, "-_")
	if len(n) > 32 {
		n = strings.Trim(n[:32], "-_")
	}
	return n
}

func parseMCPImport(text string) ([]importEntry, error) {
	text = strings.TrimSpace(text)
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &top); err != nil {
		return nil, &MCPSettingsError{Field: "import", Message: "this is not JSON of MCP servers: paste the object with \"mcpServers\" from your other app's configuration (" + err.Error() + ")"}
	}
	servers := top
	for _, k := range []string{"mcpServers", "mcp_servers", "servers"} {
		if raw, ok := top[k]; ok {
			servers = nil
			if err := json.Unmarshal(raw, &servers); err != nil || servers == nil {
				return nil, &MCPSettingsError{Field: "import", Message: fmt.Sprintf("%q must be an object of servers by name", k)}
			}
			break
		}
	}
	if raw, ok := top["mcp"]; ok && len(servers) == len(top) && len(top) == 1 {
		// VS Code settings.json: {"mcp": {"servers": {...}}}.
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			if raw2, ok := inner["servers"]; ok {
				servers = nil
				_ = json.Unmarshal(raw2, &servers)
			}
		}
	}
	if len(servers) == 0 {
		return nil, &MCPSettingsError{Field: "import", Message: "no servers found: paste {\"mcpServers\": {\"name\": {\"command\": ...}}}"}
	}
	keys := make([]string, 0, len(servers))
	for k := range servers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []importEntry
	for _, key := range keys {
		var e struct {
			Type      string            `json:"type"`
			Transport string            `json:"transport"`
			Command   string            `json:"command"`
			Args      []any             `json:"args"`
			Env       map[string]any    `json:"env"`
			Cwd       string            `json:"cwd"`
			URL       string            `json:"url"`
			ServerURL string            `json:"serverUrl"`
			Headers   map[string]string `json:"headers"`
			Disabled  bool              `json:"disabled"`
		}
		ent := importEntry{cfg: MCPServerConfig{Name: importName(key)}}
		if err := json.Unmarshal(servers[key], &e); err != nil {
			ent.cfg.Name = key
			ent.issue = "not an object with command or url"
			out = append(out, ent)
			continue
		}
		c := &ent.cfg
		c.Enabled = !e.Disabled
		kind := strings.ToLower(strings.TrimSpace(firstOf(e.Type, e.Transport)))
		url := firstOf(e.URL, e.ServerURL)
		switch {
		case e.Command != "":
			c.Transport, c.Command, c.Cwd = protocol.MCPTransportStdio, e.Command, e.Cwd
			for _, a := range e.Args {
				c.Args = append(c.Args, fmt.Sprint(a))
			}
			names := make([]string, 0, len(e.Env))
			for k := range e.Env {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				c.Env = append(c.Env, MCPVar{Name: k, Value: fmt.Sprint(e.Env[k]), Secret: secretName.MatchString(k)})
			}
		case url != "":
			c.URL = url
			switch kind {
			case "sse":
				c.Transport = protocol.MCPTransportSSE
			case "", "http", "streamable-http", "streamablehttp", "streamable_http":
				c.Transport = protocol.MCPTransportHTTP
				if kind == "" && strings.HasSuffix(strings.TrimRight(strings.SplitN(url, "?", 2)[0], "/"), "/sse") {
					c.Transport = protocol.MCPTransportSSE
				}
			default:
				ent.issue = fmt.Sprintf("the transport %q is not one Talaria speaks (stdio, http, sse)", kind)
			}
			names := make([]string, 0, len(e.Headers))
			for k := range e.Headers {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				c.Headers = append(c.Headers, MCPVar{Name: k, Value: e.Headers[k], Secret: strings.EqualFold(k, "Authorization") || secretName.MatchString(k)})
			}
		default:
			ent.issue = "neither a command nor a url is given"
		}
		if c.Name == "" {
			c.Name = key
			ent.issue = "the name has no letters or digits"
		}
		out = append(out, ent)
	}
	return out, nil
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// mcpScope is where a chat's servers run: its workspace and sandbox policy, as its
// turns send them ("" for Settings' defaults).
func (s *Service) mcpScope(ctx context.Context, sessionID string) (protocol.MCPScope, error) {
	st, err := s.GetSettings(ctx)
	if err != nil {
		return protocol.MCPScope{}, err
	}
	scope := protocol.MCPScope{Workspace: st.Workspace}
	if sessionID == "" {
		def, err := s.DefaultSandbox(ctx)
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
	}
	scope.Sandbox, err = s.sandboxPolicy(ctx, sessionID)
	return scope, err
}

// TestMCPServer connects to a server as given (saved or not; a secret left empty uses
// the one kept for the server named previous) and reports its tools, prompts and
// resources, or why it failed (Settings' "Test"). It runs under Settings' default
// sandbox policy and workspace. Errors: *MCPSettingsError for settings that cannot be
// used; a sidecar error.
func (s *Service) TestMCPServer(ctx context.Context, in MCPServerConfig, previous string) (protocol.MCPServerReport, error) {
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

// chatMCPChoice is a chat's own on/off per server (ChatOptions.MCPServers), falling
// back to its parent's for a background task or side question.
func (s *Service) chatMCPChoice(ctx context.Context, sess store.Session) map[string]bool {
	for depth := 0; depth < 3; depth++ {
		if o := chatOptions(sess); o.MCPServers != nil {
			return o.MCPServers
		}
		if sess.ParentID == "" {
			break
		}
		parent, err := s.Store.GetSession(ctx, sess.ParentID)
		if err != nil {
			break
		}
		sess = parent
	}
	return nil
}

// mcpServersFor returns the servers a chat enables, secrets resolved, for chat.start.
func (s *Service) mcpServersFor(ctx context.Context, sess store.Session) []protocol.MCPServer {
	list, err := s.readMCPServers(ctx)
	if err != nil {
		s.Log.Warn("MCP servers unreadable; the turn runs without them", "err", err)
		return nil
	}
	choice := s.chatMCPChoice(ctx, sess)
	var out []protocol.MCPServer
	for _, c := range list {
		on := c.Enabled
		if v, ok := choice[c.Name]; ok {
			on = v
		}
		if on {
			out = append(out, s.resolveMCP(c))
		}
	}
	return out
}

// GetChatMCP returns a chat's MCP menu. Errors: store.ErrNotFound.
func (s *Service) GetChatMCP(ctx context.Context, sessionID string) (ChatMCP, error) {
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return ChatMCP{}, err
	}
	list, err := s.readMCPServers(ctx)
	if err != nil {
		return ChatMCP{}, err
	}
	own := chatOptions(sess).MCPServers
	out := ChatMCP{Servers: []ChatMCPServer{}, Used: true}
	for _, c := range list {
		cs := ChatMCPServer{Name: c.Name, Transport: c.Transport, On: c.Enabled, Global: c.Enabled}
		if v, ok := own[c.Name]; ok {
			cs.On, cs.Override = v, true
		}
		out.Servers = append(out.Servers, cs)
	}
	switch core.AgentKind(sess.Runtime) {
	case protocol.RuntimeHermes:
		out.Used = false
		out.Note = "This chat runs on Hermes Agent, which uses the MCP servers of its own profile (mcp_servers in the profile's config.yaml), not the ones set here."
	case protocol.RuntimeACP:
		out.Note = "This chat's agent gets the servers that are on when its session starts, and runs and asks about their tools itself."
	}
	return out, nil
}

// SetChatMCPServer turns a server on or off in one chat (on nil: follow the global
// setting again). It applies from the chat's next turn. Errors: store.ErrNotFound;
// *MCPSettingsError for an unknown server.
func (s *Service) SetChatMCPServer(ctx context.Context, sessionID, name string, on *bool) (ChatMCP, error) {
	list, err := s.readMCPServers(ctx)
	if err != nil {
		return ChatMCP{}, err
	}
	if on != nil && !slices.ContainsFunc(list, func(x MCPServerConfig) bool { return x.Name == name }) {
		return ChatMCP{}, &MCPSettingsError{Server: name, Field: "name", Message: fmt.Sprintf("there is no MCP server named %q", name)}
	}
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return ChatMCP{}, err
	}
	o := chatOptions(sess)
	if o.MCPServers == nil {
		o.MCPServers = map[string]bool{}
	}
	if on == nil {
		delete(o.MCPServers, name)
	} else {
		o.MCPServers[name] = *on
	}
	if _, err := s.SetChatOptions(ctx, sessionID, o); err != nil {
		return ChatMCP{}, err
	}
	return s.GetChatMCP(ctx, sessionID)
}

// ListChatMCP starts (when not running) the servers a chat enables and returns what
// each offers: the composer's prompts and the resources a message can attach. A server
// that fails is a report with OK false. Errors: store.ErrNotFound; a sidecar error.
func (s *Service) ListChatMCP(ctx context.Context, sessionID string) ([]protocol.MCPServerReport, error) {
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	servers := s.mcpServersFor(ctx, sess)
	if len(servers) == 0 {
		return []protocol.MCPServerReport{}, nil
	}
	scope, err := s.mcpScope(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, mcpListTimeout)
	defer cancel()
	var res protocol.MCPListResult
	if err := s.Sidecar.Call(cctx, protocol.MethodMCPList, protocol.MCPListParams{MCPScope: scope, Servers: servers}, nil, &res); err != nil {
		return nil, err
	}
	return res.Servers, nil
}

// chatServer is one enabled server of a chat with its scope. Errors: *MCPSettingsError
// when the chat does not enable it.
func (s *Service) chatServer(ctx context.Context, sessionID, name string) (protocol.MCPServer, protocol.MCPScope, error) {
	sess, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return protocol.MCPServer{}, protocol.MCPScope{}, err
	}
	for _, srv := range s.mcpServersFor(ctx, sess) {
		if srv.Name == name {
			scope, err := s.mcpScope(ctx, sessionID)
			return srv, scope, err
		}
	}
	return protocol.MCPServer{}, protocol.MCPScope{}, &MCPSettingsError{Server: name, Field: "name",
		Message: fmt.Sprintf("the MCP server %q is not on in this chat", name)}
}

// GetMCPPrompt renders a prompt of one of a chat's servers with its arguments, for
// the composer. Errors: *MCPSettingsError; a sidecar error (agent_unavailable when the
// server failed or refused).
func (s *Service) GetMCPPrompt(ctx context.Context, sessionID, server, name string, args map[string]string) (MCPPromptText, error) {
	srv, scope, err := s.chatServer(ctx, sessionID, server)
	if err != nil {
		return MCPPromptText{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, mcpFetchTimeout)
	defer cancel()
	var res protocol.MCPPromptGetResult
	if err := s.Sidecar.Call(cctx, protocol.MethodMCPPromptGet, protocol.MCPPromptGetParams{MCPScope: scope, Server: srv, Name: name, Arguments: args}, nil, &res); err != nil {
		return MCPPromptText{}, err
	}
	return MCPPromptText{Server: server, Name: name, Description: res.Description, Text: s.Vault.RedactString(res.Text)}, nil
}

// ReadMCPResource reads a resource of one of a chat's servers, to attach to a message.
// Errors: *MCPSettingsError; a sidecar error.
func (s *Service) ReadMCPResource(ctx context.Context, sessionID, server, uri string) (protocol.MCPResourceReadResult, error) {
	srv, scope, err := s.chatServer(ctx, sessionID, server)
	if err != nil {
		return protocol.MCPResourceReadResult{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, mcpFetchTimeout)
	defer cancel()
	var res protocol.MCPResourceReadResult
	if err := s.Sidecar.Call(cctx, protocol.MethodMCPResourceRead, protocol.MCPResourceReadParams{MCPScope: scope, Server: srv, URI: uri}, nil, &res); err != nil {
		return protocol.MCPResourceReadResult{}, err
	}
	return res, nil
}
