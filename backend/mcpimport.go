package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"talaria/sidecar/protocol"
)

// Importing MCP servers from the JSON other apps keep them in (Settings' "Import").

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
func (area *MCPArea) ImportMCPServers(ctx context.Context, text string) (MCPImportResult, error) {
	s := area.s
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
	res.Servers, _ = s.MCP().ListMCPServers(ctx)
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
