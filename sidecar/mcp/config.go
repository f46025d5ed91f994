package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"talaria/sidecar/protocol"
)

// NameRE is what a server name must match: letters, digits, '-' and single '_', at
// most 32 bytes, starting with a letter or digit. The name prefixes the server's tools
// (<name>__<tool>), so "__" may not appear in it.
var NameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// envNameRE is what an environment variable name of a stdio server must match.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// headerNameRE is an HTTP header field name (RFC 9110 token).
var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// ConfigError says a server's settings cannot be used as they are; Field names the
// setting ("name", "command", "url", "env", "headers", "cwd", "transport", "sandbox").
type ConfigError struct{ Server, Field, Message string }

func (e *ConfigError) Error() string {
	if e.Server == "" {
		return e.Message
	}
	return fmt.Sprintf("MCP server %q: %s", e.Server, e.Message)
}

// Validate checks one server's settings: its name, transport, command or URL, the
// names of its environment variables and headers. Errors: *ConfigError.
func Validate(s protocol.MCPServer) error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Server: s.Name, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if !NameRE.MatchString(s.Name) || strings.Contains(s.Name, "__") {
		return bad("name", "the name %q must be 1 to 32 letters, digits, '-' or '_' (not '__'), starting with a letter or digit", trim(s.Name, 40))
	}
	switch s.Transport {
	case protocol.MCPTransportStdio:
		if strings.TrimSpace(s.Command) == "" {
			return bad("command", "no command is set: enter the program that starts the server (e.g. npx, uvx, node)")
		}
		if strings.ContainsRune(s.Command, 0) {
			return bad("command", "the command contains a NUL byte")
		}
		for _, a := range s.Args {
			if strings.ContainsRune(a, 0) {
				return bad("command", "an argument contains a NUL byte")
			}
		}
		for k, v := range s.Env {
			if !envNameRE.MatchString(k) {
				return bad("env", "%q is not an environment variable name", trim(k, 40))
			}
			if strings.ContainsRune(v, 0) {
				return bad("env", "the value of %s contains a NUL byte", k)
			}
		}
		if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
			return bad("cwd", "the working folder %q is not an absolute path", trim(s.Cwd, 200))
		}
		switch s.Sandbox {
		case protocol.MCPSandboxChat, protocol.MCPSandboxNetwork, protocol.MCPSandboxOff:
		default:
			return bad("sandbox", "sandbox must be \"\" (the chat's), %q or %q, not %q", protocol.MCPSandboxNetwork, protocol.MCPSandboxOff, trim(s.Sandbox, 40))
		}
	case protocol.MCPTransportHTTP, protocol.MCPTransportSSE:
		u, err := url.Parse(strings.TrimSpace(s.URL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url", "%q is not an http(s) URL: enter the server's endpoint, e.g. http://127.0.0.1:3001/mcp", trim(s.URL, 200))
		}
		for k, v := range s.Headers {
			if !headerNameRE.MatchString(k) {
				return bad("headers", "%q is not a header name", trim(k, 40))
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return bad("headers", "the value of the header %s contains a line break", k)
			}
		}
	default:
		return bad("transport", "the transport must be stdio, http or sse, not %q", trim(s.Transport, 40))
	}
	return nil
}

// instanceKey identifies a running instance: the server's settings that change how it
// starts (not AllowReadOnly or DisabledTools, which only change what the runtime does
// with it) and the scope it runs in.
func instanceKey(s protocol.MCPServer, scope string) string {
	type keyed struct {
		Name, Transport, Command, Cwd, URL, Sandbox, Scope string
		Args                                               []string
		Env, Headers                                       [][2]string
	}
	k := keyed{Name: s.Name, Transport: s.Transport, Command: s.Command, Cwd: s.Cwd, URL: s.URL, Sandbox: s.Sandbox,
		Scope: scope, Args: s.Args, Env: sortedPairs(s.Env), Headers: sortedPairs(s.Headers)}
	b, _ := json.Marshal(k)
	sum := sha256.Sum256(b)
	return s.Name + ":" + hex.EncodeToString(sum[:12])
}

func sortedPairs(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Secrets returns the secret values of a server's environment and headers (those
// SecretKeys names, and an Authorization header), which the runtime redacts from
// everything it shows.
func Secrets(s protocol.MCPServer) []string {
	secret := map[string]bool{}
	for _, k := range s.SecretKeys {
		secret[strings.ToLower(k)] = true
	}
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= 4 {
			out = append(out, v)
		}
	}
	for k, v := range s.Env {
		if secret[strings.ToLower(k)] {
			add(v)
		}
	}
	for k, v := range s.Headers {
		if secret[strings.ToLower(k)] || strings.EqualFold(k, "Authorization") {
			add(v)
			if scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok && scheme != "" {
				add(cred) // "Bearer <token>": the token alone too
			}
		}
	}
	return out
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
