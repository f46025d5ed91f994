package acp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/gate"
	"talaria/sidecar/sandbox"
)

// The client side of ACP's terminal/* methods: the agent asks Talaria to run a command
// and reads its output. The command runs in the chat's workspace (its cwd must lie
// inside it), through Talaria's dangerous-command approvals, with stdin closed,
// stdout and stderr merged, in a process group of its own that is killed on
// terminal/kill, terminal/release, a stopped turn, chat.evict and the sidecar's exit.

// Terminal limits.
const (
	defaultTerminalOutput = 1 << 20          // bytes kept when the agent sets no outputByteLimit
	maxTerminalOutput     = 16 << 20         // the largest outputByteLimit honoured
	maxTerminalRun        = 60 * time.Minute // a terminal is killed after this long
	maxTerminals          = 64               // un-released terminals (running or exited) at once
	maxTerminalsOutput    = 256 << 20        // the sum of the outputByteLimits of un-released terminals (a buffer may hold up to 1.5× its limit before it is compacted: terminalSlack)
)

// launch starts a terminal's command (argv, in dir, with a minimal environment plus
// env: sandbox.Env) confined by the policy, writing its output to out.
var launch = sandboxLaunch

// launched is a started command: Wait returns when it has exited (exit code, or -1 and
// the signal that killed it); Kill kills its whole process group.
type launched interface {
	Wait() (code int, signal string)
	Kill()
}

type terminals struct {
	log  *slog.Logger
	mu   sync.Mutex
	byID map[string]*terminal
	// starting counts the terminals being launched (and startingBytes their output
	// limits): reserved under mu with the bounds' check, so concurrent terminal/create
	// requests (each on its own goroutine) cannot all pass it.
	starting, startingBytes int
}

type terminal struct {
	id        string
	sessionID string
	proc      launched
	done      chan struct{}

	mu        sync.Mutex
	buf       []byte
	limit     int
	truncated bool
	code      int
	signal    string
}

func newTerminals(log *slog.Logger) *terminals {
	return &terminals{log: log, byID: map[string]*terminal{}}
}

// Write keeps the last limit bytes of output (ACP: output is truncated from the
// beginning). The buffer holds up to limit plus some slack and is compacted in place
// when it fills, so a write costs amortised O(len(p)), with no allocation once the
// buffer is full; snapshot cuts it to limit bytes on a character boundary.
func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > t.limit {
		p = p[len(p)-t.limit:]
		t.buf = t.buf[:0]
		t.truncated = true
	}
	if len(t.buf)+len(p) > t.limit+terminalSlack(t.limit) {
		keep := t.limit - len(p)
		t.buf = t.buf[:copy(t.buf, t.buf[len(t.buf)-keep:])]
		t.truncated = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// terminalSlack is how far a terminal's buffer may grow past its limit before it is
// compacted: half the limit, at least 4 KiB.
func terminalSlack(limit int) int { return max(limit/2, 4096) }

func (t *terminal) snapshot() (out string, truncated bool, exited bool, code int, signal string) {
	select {
	case <-t.done:
		exited = true
	default:
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b, truncated := t.buf, t.truncated
	if len(b) > t.limit {
		cut := len(b) - t.limit
		for cut < len(b) && !utf8.RuneStart(b[cut]) {
			cut++
		}
		b, truncated = b[cut:], true
	} else if truncated {
		// Compaction may have cut inside a character: start at the next one.
		cut := 0
		for cut < len(b) && cut < utf8.UTFMax && !utf8.RuneStart(b[cut]) {
			cut++
		}
		b = b[cut:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), truncated, exited, t.code, t.signal
}

// start runs a terminal/create that was approved, confined by policy.
func (ts *terminals) start(sessionID string, policy sandbox.Policy, argv []string, dir string, env []string, limit int) (*terminal, error) {
	// Every un-released terminal counts, exited ones too: each keeps its output (up to
	// its outputByteLimit) until terminal/release, so an agent that never releases
	// cannot pile them up (issue 26 #4).
	if limit <= 0 {
		limit = defaultTerminalOutput
	}
	limit = min(limit, maxTerminalOutput)
	// The bounds are checked and this terminal's share reserved in one critical
	// section, released once it is launched (and counted in byID) or failed.
	ts.mu.Lock()
	held, kept := len(ts.byID)+ts.starting, ts.startingBytes
	for _, t := range ts.byID {
		kept += t.limit
	}
	if held >= maxTerminals {
		ts.mu.Unlock()
		return nil, fmt.Errorf("%d terminals are held already (running or exited, not released): release some (terminal/release) first", held)
	}
	if kept+limit > maxTerminalsOutput {
		ts.mu.Unlock()
		return nil, fmt.Errorf("the terminals not released may keep %d MiB of output already (at most %d MiB in all): release some (terminal/release) or ask for a smaller outputByteLimit", kept>>20, maxTerminalsOutput>>20)
	}
	ts.starting++
	ts.startingBytes += limit
	ts.mu.Unlock()
	t := &terminal{id: newID("term_"), sessionID: sessionID, done: make(chan struct{}), limit: limit}
	proc, err := launch(policy, argv, dir, env, t)
	if err != nil {
		ts.mu.Lock()
		ts.starting--
		ts.startingBytes -= limit
		ts.mu.Unlock()
		return nil, err
	}
	t.proc = proc
	go func() {
		timer := time.AfterFunc(maxTerminalRun, proc.Kill)
		code, sig := proc.Wait()
		timer.Stop()
		t.mu.Lock()
		t.code, t.signal = code, sig
		t.mu.Unlock()
		close(t.done)
	}()
	ts.mu.Lock()
	ts.byID[t.id] = t
	ts.starting--
	ts.startingBytes -= limit
	ts.mu.Unlock()
	ts.log.Info("terminal started", "terminal_id", t.id, "session_id", sessionID)
	return t, nil
}

// get returns a session's terminal, or an error for the agent.
func (ts *terminals) get(sessionID, id string) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.byID[id]
	if t == nil || t.sessionID != sessionID {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("there is no terminal %q in this session (it was released, or never created)", id)})
	}
	return t, nil
}

// outputOf is a terminal's output so far ("" for an unknown one), for tool cards.
func (ts *terminals) outputOf(id string) string {
	ts.mu.Lock()
	t := ts.byID[id]
	ts.mu.Unlock()
	if t == nil {
		return ""
	}
	out, _, _, _, _ := t.snapshot()
	return out
}

func (ts *terminals) release(sessionID, id string) error {
	t, err := ts.get(sessionID, id)
	if err != nil {
		return err
	}
	t.proc.Kill()
	ts.mu.Lock()
	delete(ts.byID, id)
	ts.mu.Unlock()
	return nil
}

// killSession kills the running terminals of a session (a stopped turn); their output
// stays readable until released.
// running reports whether a terminal of Talaria session sessionID still runs its
// command (a long build or test the agent waits on: the agent is not stuck).
func (ts *terminals) running(sessionID string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.byID {
		if t.sessionID != sessionID {
			continue
		}
		select {
		case <-t.done:
		default:
			return true
		}
	}
	return false
}

func (ts *terminals) killSession(sessionID string) {
	ts.mu.Lock()
	var kill []*terminal
	for _, t := range ts.byID {
		if t.sessionID == sessionID {
			kill = append(kill, t)
		}
	}
	ts.mu.Unlock()
	for _, t := range kill {
		t.proc.Kill()
	}
}

// releaseSession kills and forgets a session's terminals.
func (ts *terminals) releaseSession(sessionID string) {
	ts.mu.Lock()
	var kill []*terminal
	for id, t := range ts.byID {
		if t.sessionID == sessionID {
			kill = append(kill, t)
			delete(ts.byID, id)
		}
	}
	ts.mu.Unlock()
	for _, t := range kill {
		t.proc.Kill()
	}
}

func (ts *terminals) closeAll() {
	ts.mu.Lock()
	all := ts.byID
	ts.byID = map[string]*terminal{}
	ts.mu.Unlock()
	for _, t := range all {
		t.proc.Kill()
	}
}

// ---- the ACP methods ----

// createTerminal serves terminal/create.
func (t *turn) createTerminal(ctx context.Context, req sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	if strings.TrimSpace(req.Command) == "" {
		return sdk.CreateTerminalResponse{}, sdk.NewInvalidParams(map[string]any{"error": "the command is empty"})
	}
	dir := t.p.Workspace
	if req.Cwd != nil && *req.Cwd != "" {
		ws, err := tools.OpenWorkspace(t.p.Workspace)
		if err != nil {
			return sdk.CreateTerminalResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		rel, err := ws.Rel(*req.Cwd)
		top := ws.Dir()
		ws.Close()
		if err != nil {
			return sdk.CreateTerminalResponse{}, sdk.NewInvalidParams(map[string]any{"error": "cwd: " + err.Error()})
		}
		dir = top
		if rel != "." {
			dir = top + string(os.PathSeparator) + rel
		}
		// Rel checks the name; a link inside the workspace may still lead out of it.
		real, err1 := filepath.EvalSymlinks(dir)
		realTop, err2 := filepath.EvalSymlinks(top)
		if err1 != nil || err2 != nil || !within(real, realTop) {
			return sdk.CreateTerminalResponse{}, sdk.NewInvalidParams(map[string]any{"error": "cwd: " + *req.Cwd + " is not a folder inside the workspace (a link may lead out of it)"})
		}
		// The paths the chat's sandbox hides (the app's data folder) are no cwd either,
		// by what the cwd resolves to (issue 26 #4).
		for _, h := range t.policy.Hidden {
			if rh, err := filepath.EvalSymlinks(h); err == nil && within(real, rh) || within(real, filepath.Clean(h)) {
				return sdk.CreateTerminalResponse{}, sdk.NewInvalidParams(map[string]any{"error": "cwd: " + *req.Cwd + " is inside a folder the chat's sandbox hides: pick a folder of the workspace"})
			}
		}
	}
	var argv []string
	var shown string
	if len(req.Args) == 0 {
		// A command line without arguments is shell text (as editors run it).
		argv = []string{shellPath(), "-c", req.Command}
		shown = req.Command
	} else {
		argv = append([]string{req.Command}, req.Args...)
		shown = shellJoin(argv)
	}
	var env, shownEnv []string
	for _, e := range req.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			continue
		}
		if refusedTerminalEnv(e.Name, e.Value) {
			return sdk.CreateTerminalResponse{}, sdk.NewInvalidParams(map[string]any{"error": "env: " + e.Name +
				" changes what a program loads or a shell runs before the command, so a terminal may not set it: put what it should do in the command itself"})
		}
		env = append(env, e.Name+"="+e.Value)
		// A secret-looking variable's value is not on the card (which the chat's
		// transcript keeps): GITHUB_TOKEN=[REDACTED].
		shownValue := e.Value
		if gate.SecretField(e.Name, "", "", "string", "", false) {
			shownValue = "[REDACTED]"
		}
		shownEnv = append(shownEnv, shellJoin([]string{e.Name + "=" + shownValue}))
	}
	// The approval card and the dangerous-command check see the environment the agent
	// sets, as `env NAME=value ... command` (the danger check looks through env), not
	// the command alone.
	if len(shownEnv) > 0 {
		shown = "env " + strings.Join(shownEnv, " ") + " " + shown
	}
	// A cwd other than the workspace is on the card (and seen by the danger check), so
	// `rm -r ./*` does not read as workspace-wide when it runs elsewhere.
	if dir != t.p.Workspace {
		shown = "cd " + shellJoin([]string{dir}) + " && " + shown
	}
	// The agent's own secrets and the chat's MCP secrets it was given are redacted
	// from the card wherever they appear (an argument, an env value).
	shown = t.r.redactLine(shown)
	run, why := t.approveCommand(ctx, shown)
	if why != "" {
		return sdk.CreateTerminalResponse{}, &sdk.RequestError{Code: -32000, Message: why}
	}
	limit := 0
	if req.OutputByteLimit != nil {
		limit = *req.OutputByteLimit
	}
	term, err := t.r.terms.start(t.p.SessionID, run, argv, dir, env, limit)
	if err != nil {
		return sdk.CreateTerminalResponse{}, &sdk.RequestError{Code: -32000, Message: "the command could not start: " + err.Error()}
	}
	return sdk.CreateTerminalResponse{TerminalId: term.id}, nil
}

func exitStatusOf(code int, signal string) (*int, *string) {
	if signal != "" {
		return nil, &signal
	}
	return &code, nil
}

// shellJoin quotes argv for display and for the dangerous-command check.
func shellJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			parts[i] = a
			continue
		}
		parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(parts, " ")
}

func shellPath() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

type sandboxProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// sandboxLaunch runs argv under sandbox.Command: stdin on the null device, stdout and
// stderr merged into out, its own process group, killed with everything it started.
func sandboxLaunch(policy sandbox.Policy, argv []string, dir string, env []string, out io.Writer) (launched, error) {
	cmd, err := sandbox.Command(context.Background(), policy, argv, sandbox.Env(env...), dir)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	// A background job still holding the output must not keep Wait from returning.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &sandboxProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait() //nolint:errcheck // the exit status is read from ProcessState
		// What the command left running in its group goes with it (as in the built-in
		// terminal tool).
		sandbox.Kill(cmd) //nolint:errcheck // gone
		close(p.done)
	}()
	return p, nil
}

func (p *sandboxProc) Wait() (int, string) {
	<-p.done
	st := p.cmd.ProcessState
	if st == nil {
		return -1, ""
	}
	return exitOf(st)
}

func (p *sandboxProc) Kill() { sandbox.Kill(p.cmd) } //nolint:errcheck // gone

// refusedTerminalEnv reports whether terminal/create may not set the environment
// variable name to value: dynamic-loader variables and those that make a shell, an
// interpreter, a library or a tool run code of their choosing before (or instead of)
// the approved command. The list follows sudo's env_reset "bad" table
// (plugins/sudoers/env.c, initial_badenv_table: LD_*, _RLD*, DYLD_*, BASH_ENV, ENV,
// SHELLOPTS, BASHOPTS, PS4, IFS, PERL5OPT, PERL5LIB, PYTHONPATH, RUBYOPT,
// JAVA_TOOL_OPTIONS, BASH_FUNC_*, ...) and glibc's UNSECURE_ENVVARS (GCONV_PATH,
// GLIBC_TUNABLES, LOCPATH, NLSPATH, MALLOC_*, HOSTALIASES, RES_OPTIONS, ...; TMPDIR
// stays allowed), plus the startup hooks named by the issue-26 reviews
// (PROMPT_COMMAND, *_STARTUP, PYTHONSTARTUP, PYTHONWARNINGS, NODE_OPTIONS, git's
// GIT_SSH_COMMAND, GIT_PROXY_COMMAND, GIT_TEMPLATE_DIR, GIT_DIR and GIT_CONFIG_*
// injection, OPENSSL_CONF's engines, npm's script shell and config files). PATH may
// be passed only unchanged (an agent that sends its whole environment): another PATH
// changes which program a command's name runs, which the card does not show. Pagers
// and editors (PAGER=cat is common) stay allowed: they are shown on the card.
func refusedTerminalEnv(name, value string) bool {
	n := strings.ToUpper(name)
	for _, p := range []string{"LD_", "_RLD", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_", "MALLOC_", "OPENSSL_"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	if strings.HasSuffix(n, "_STARTUP") {
		return true
	}
	switch n {
	case "PATH":
		return value != os.Getenv("PATH")
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "CDPATH", "GLOBIGNORE",
		"PROMPT_COMMAND", "ZDOTDIR", "FPATH", "NULLCMD", "READNULLCMD",
		"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "PERLIO_DEBUG",
		"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE", "PYTHONWARNINGS", "PYTHONBREAKPOINT",
		"RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
		"GIT_SSH", "GIT_SSH_COMMAND", "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
		"GIT_CONFIG", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_COMMON_DIR", "SSH_ASKPASS",
		"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "NIS_PATH",
		"NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR",
		"NPM_CONFIG_SCRIPT_SHELL", "NPM_CONFIG_NODE_OPTIONS", "NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG":
		return true
	}
	return false
}

// within reports whether path is dir or inside it (both cleaned, absolute).
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(os.PathSeparator))+string(os.PathSeparator))
}
