// Package remote runs agent runtimes on another machine through the user's own ssh:
// the system client, so ~/.ssh/config (Host aliases, ProxyJump), keys in ssh-agent and
// known_hosts behave as they do in a terminal. Talaria's own binary is copied once to
// ~/.cache/talaria/<version>/talaria on the host (checked by SHA-256) and runs there as
// `talaria sidecar`, speaking the same protocol over the ssh channel's stdio; Hermes,
// ACP agents, MCP servers and the sandbox run on the host. docs/remote.md is the
// user's guide.
//
// Remote runtimes are a runtime kind ("ssh"): "ssh:<host>" is the built-in runtime on
// the host, "ssh:<host>:hermes" its Hermes Agent, "ssh:<host>:acp:<agent>" an ACP agent
// found on its PATH.
package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Host is one remote machine the user reaches with ssh.
type Host struct {
	// Name is the user's label and the runtime ids' part: a letter or digit, then
	// letters, digits, '.', '_' or '-' (at most 40).
	Name string `json:"name"`
	// Target is what the user types after `ssh`: "user@host", "host", or a Host alias
	// of ~/.ssh/config.
	Target string `json:"target"`
	// Port is the ssh port; 0 leaves it to ssh (the config's, else 22).
	Port int `json:"port"`
	// IdentityFile is a private key file (~ is expanded); "" leaves it to ssh.
	IdentityFile string `json:"identity_file"`
	// Hermes is the `hermes` launcher or its Python on the host; "" finds it there
	// (~/.hermes/hermes-agent's venv, else `hermes` on the host's PATH).
	Hermes string `json:"hermes"`
}

var (
	nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)
	// targetRe: an ssh destination ([user@]host, or an alias); never an option.
	targetRe = regexp.MustCompile(`^[A-Za-z0-9_.\[\]:%][A-Za-z0-9_.@\[\]:%+-]*$`)
)

// FieldError says which field of a Host is wrong and why.
type FieldError struct {
	Field   string // "name", "target", "port", "identity_file", "hermes"
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Validate checks h. Errors: *FieldError.
func (h Host) Validate() error {
	switch {
	case !nameRe.MatchString(h.Name):
		return &FieldError{"name", "use letters, digits, '.', '_' or '-' (at most 40), starting with a letter or digit, e.g. homeserver"}
	case !targetRe.MatchString(h.Target) || len(h.Target) > 255:
		return &FieldError{"target", "give what you type after `ssh`: user@host, host, or a Host alias of ~/.ssh/config"}
	case h.Port < 0 || h.Port > 65535:
		return &FieldError{"port", "a port is 1 to 65535 (0 or empty: ssh's own)"}
	case !plainPath(h.IdentityFile):
		return &FieldError{"identity_file", "not a file name (it has a control or invisible character)"}
	case !plainPath(h.Hermes):
		return &FieldError{"hermes", "not a file name (it has a control or invisible character)"}
	}
	return nil
}

// plainPath reports whether p has no control, format (invisible: zero-width, bidi)
// or invalid UTF-8 characters: what Quote and a shell would pass on unseen.
func plainPath(p string) bool {
	if !utf8.ValidString(p) {
		return false
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// SSH runs the system ssh client.
type SSH struct {
	// Program is the ssh executable; "ssh" (from PATH) when "".
	Program string
	// Options are added before the destination (tests: -F, UserKnownHostsFile).
	Options []string
}

func (c SSH) program() string {
	if c.Program == "" {
		return "ssh"
	}
	return c.Program
}

// Argv returns ssh's arguments that run the shell command line remote on h: no
// terminal, no password prompts (BatchMode: the app has no terminal to ask in; keys
// come from ssh-agent or the identity file), a dead connection noticed within about a
// minute (ServerAlive), then the user's own configuration.
func (c SSH) Argv(h Host, remote string) []string {
	args := []string{"-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20",
		"-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"}
	if h.Port != 0 {
		args = append(args, "-p", strconv.Itoa(h.Port))
	}
	if h.IdentityFile != "" {
		args = append(args, "-i", expandHome(h.IdentityFile))
	}
	args = append(args, c.Options...)
	return append(args, "--", h.Target, remote)
}

// Quote joins words into one POSIX shell command line, each word quoted as needed (the
// remote login shell reads it: ssh sends a single string). Errors: a word holding a
// NUL byte.
func Quote(words []string) (string, error) {
	out := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangPOSIX)
		if err != nil {
			return "", fmt.Errorf("cannot pass %q to the remote shell: %w", w, err)
		}
		out[i] = q
	}
	return strings.Join(out, " "), nil
}

// Run runs the shell script on h with stdin (nil: none) and returns its standard
// output. Errors: *Error (ssh's own failures classified: unknown or changed host key,
// refused login, unreachable host; or the script's failure with its last stderr lines).
func (c SSH) Run(ctx context.Context, h Host, script string, stdin io.Reader) ([]byte, error) {
	// From the login's home whatever its login script did (bash reads ~/.bashrc for
	// ssh's commands, and one may cd elsewhere).
	cmd := exec.CommandContext(ctx, c.program(), c.Argv(h, "cd || exit 1\n"+script)...)
	out, errb := &capped{max: maxRunOutput}, &capped{max: maxRunOutput}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, out, errb
	err := cmd.Run()
	if err == nil {
		return out.Bytes(), nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return nil, &Error{Host: h.Name, Code: CodeNoSSH, Detail: err.Error()}
	}
	return nil, Classify(h, ee.ExitCode(), errb.String())
}

// maxRunOutput bounds what Run keeps of a script's stdout and of its stderr: a login
// script or a hostile host cannot fill this process's memory.
const maxRunOutput = 1 << 20

// capped keeps the first max bytes written to it and discards the rest.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Codes of an Error.
const (
	CodeNoSSH          = "no_ssh"           // the ssh client could not be run
	CodeHostKeyUnknown = "host_key_unknown" // the host's key is not in known_hosts
	CodeHostKeyChanged = "host_key_changed" // the host's key differs from known_hosts
	CodeAuth           = "auth"             // the host refused the login
	CodeUnreachable    = "unreachable"      // no connection (name, route, refused, timeout)
	CodeUnsupported    = "unsupported"      // the host's system cannot run this sidecar
	CodeRemote         = "remote"           // a command on the host failed
)

// Error is a failure to reach or use a remote host. Hint says what to do; Permanent
// reports whether trying again without the user's action is pointless.
type Error struct {
	Host   string // the Host's Name
	Code   string // one of the Code constants
	Detail string // ssh's or the command's own words (last lines of stderr)
	// Login is what the user types to connect from a terminal ("ssh -p 2222
	// me@server"), "" when unknown; KeyName is the host's name in known_hosts
	// ("server", "[server]:2222").
	Login, KeyName string
}

func (e *Error) Error() string {
	what := map[string]string{
		CodeNoSSH:          "the ssh client could not be run",
		CodeHostKeyUnknown: "its host key is not known",
		CodeHostKeyChanged: "its host key has CHANGED since you last connected",
		CodeAuth:           "it refused the login",
		CodeUnreachable:    "it cannot be reached",
		CodeUnsupported:    "it cannot run Talaria's sidecar",
		CodeRemote:         "a command there failed",
	}[e.Code]
	msg := fmt.Sprintf("Remote host %s: %s", e.Host, what)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// Hint says what the user can do about e.
func (e *Error) Hint() string {
	switch e.Code {
	case CodeNoSSH:
		return "Install the OpenSSH client (on Debian and Ubuntu: apt install openssh-client) and try again."
	case CodeHostKeyUnknown:
		return "Connect once from a terminal (" + e.login() + "), check the key's fingerprint and accept it; then use Test again."
	case CodeHostKeyChanged:
		return "This can mean someone is intercepting the connection. If the host was reinstalled, remove its old key (ssh-keygen -R '" + e.keyName() + "') and connect once from a terminal (" + e.login() + ") to accept the new one."
	case CodeAuth:
		return "Talaria logs in with your keys (ssh-agent or the identity file), never a password: add your public key to the host's ~/.ssh/authorized_keys, or load the key into ssh-agent."
	case CodeUnreachable:
		return "Check that the host is on and reachable from here (network, VPN, its name and port), then try again; Talaria retries on its own."
	case CodeUnsupported:
		return "Run the agent on a host of the same system as this computer, or run it here."
	}
	return "Connect from a terminal (" + e.login() + ") to see what the host says, then use Test again in Settings, Remote hosts."
}

func (e *Error) login() string {
	if e.Login != "" {
		return e.Login
	}
	return "ssh " + e.Host
}

func (e *Error) keyName() string {
	if e.KeyName != "" {
		return e.KeyName
	}
	return e.Host
}

// Login is the command that connects to h from a terminal: "ssh [-p port] [-i file]
// target".
func (h Host) Login() string {
	words := []string{"ssh"}
	if h.Port != 0 {
		words = append(words, "-p", strconv.Itoa(h.Port))
	}
	if h.IdentityFile != "" {
		words = append(words, "-i", h.IdentityFile)
	}
	line, err := Quote(append(words, h.Target))
	if err != nil {
		return "ssh " + h.Target
	}
	return line
}

// KeyName is h's name in known_hosts: the target's host part, "[host]:port" for a port
// other than 22.
func (h Host) KeyName() string {
	host := h.Target
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if h.Port != 0 && h.Port != 22 {
		return "[" + host + "]:" + strconv.Itoa(h.Port)
	}
	return host
}

// Permanent reports whether retrying cannot help until the user acts.
func (e *Error) Permanent() bool {
	switch e.Code {
	case CodeNoSSH, CodeHostKeyUnknown, CodeHostKeyChanged, CodeAuth, CodeUnsupported:
		return true
	}
	return false
}

// Classify turns ssh's exit status and standard error into an *Error. ssh exits with
// 255 for its own errors (ssh(1), EXIT STATUS); other statuses are the remote
// command's.
func Classify(h Host, status int, stderr string) *Error {
	detail := lastLines(stderr, 3)
	if status != 255 {
		return &Error{Host: h.Name, Code: CodeRemote, Detail: fmt.Sprintf("exit status %d: %s", status, detail), Login: h.Login(), KeyName: h.KeyName()}
	}
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(stderr, w) {
				return true
			}
		}
		return false
	}
	code := CodeRemote
	switch {
	case has("REMOTE HOST IDENTIFICATION HAS CHANGED", "Host key for", "has changed and you have requested strict checking"):
		code = CodeHostKeyChanged
	case has("Host key verification failed", "No ED25519 host key is known", "No ECDSA host key is known", "No RSA host key is known", "host key is known for"):
		code = CodeHostKeyUnknown
	case has("Permission denied", "Too many authentication failures"):
		code = CodeAuth
	case has("Could not resolve hostname", "Connection refused", "Connection timed out", "timed out", "No route to host",
		"Network is unreachable", "Connection closed by", "Connection reset", "kex_exchange_identification", "Broken pipe"):
		code = CodeUnreachable
	}
	return &Error{Host: h.Name, Code: code, Detail: detail, Login: h.Login(), KeyName: h.KeyName()}
}

func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "@@@") {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
