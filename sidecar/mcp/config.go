package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"talaria/sidecar/protocol"
)

// Validate checks one server's settings (protocol.ValidateMCPServer). Errors:
// *protocol.MCPConfigError.
func Validate(s protocol.MCPServer) error { return protocol.ValidateMCPServer(s) }

// ConfigError is protocol.MCPConfigError.
type ConfigError = protocol.MCPConfigError

// instanceKey identifies a running instance: the server's settings that change how it
// starts (not AllowReadOnly or DisabledTools, which only change what the runtime does
// with it) and the scope it runs in.
func instanceKey(s protocol.MCPServer, scope string) string {
	type keyed struct {
		Name, Transport, Command, Cwd, URL, Sandbox, Scope string
		Args, Writable                                     []string
		Env, Headers                                       [][2]string
	}
	k := keyed{Name: s.Name, Transport: s.Transport, Command: s.Command, Cwd: s.Cwd, URL: s.URL, Sandbox: s.Sandbox,
		Scope: scope, Args: s.Args, Writable: s.WritablePaths, Env: sortedPairs(s.Env), Headers: sortedPairs(s.Headers)}
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
