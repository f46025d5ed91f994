package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"talaria/sidecar/stderrtail"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
)

// agentConn is one running agent process and its ACP connection. It is replaced when
// the agent dies; chats opened on it then reopen their sessions on the next one.
type agentConn struct {
	gen  int
	proc *process
	conn *sdk.ClientSideConnection
	init sdk.InitializeResponse
	side *sideCalls // requests the SDK has no method for (session/delete)

	dead     chan struct{} // closed once the agent cannot be used any more
	deadOnce sync.Once
	mu       sync.Mutex
	why      error // why it died, when known before dead closed (a protocol error)

	// mcpGiven are the MCP servers (their ACP JSON) any session of this process was
	// opened with. Agents such as OpenCode keep a server running for the whole process
	// once given, so a server no chat wants any more leaves only with a new process
	// (Runtime.dropStaleMCP). Guarded by Runtime.mu.
	mcpGiven map[string]string // JSON -> server name
}

// AgentExitError says an agent process ended: How is "exited with status 1", "was
// killed by signal 9", ...; Stderr are the lines of its stderr that say why (at most
// three: its error and panic lines before the last ones, never stack frames nor INFO
// log lines; sidecar/stderrtail).
type AgentExitError struct {
	How    string
	Stderr []string
}

func (e *AgentExitError) Error() string {
	msg := "the agent process " + e.How
	if len(e.Stderr) > 0 {
		msg += "; it said: " + strings.Join(e.Stderr, " / ")
	}
	return msg
}

// alive reports whether the agent can still be used: a closed connection or an
// exited process counts as dead at once (before the watcher notices).
func (a *agentConn) alive() bool {
	select {
	case <-a.dead:
		return false
	case <-a.conn.Done():
	case <-a.proc.done:
	default:
		return true
	}
	a.fail(nil)
	return false
}

// fail marks the agent unusable (keeping the first reason) and ends its process.
func (a *agentConn) fail(why error) {
	a.mu.Lock()
	if a.why == nil && why != nil {
		a.why = why
	}
	a.mu.Unlock()
	a.deadOnce.Do(func() {
		close(a.dead)
		go a.proc.terminate(3 * time.Second)
	})
}

// exitWait is how long reason waits for a dead agent's exit status (a variable: the
// package's tests, whose binary is also the sidecar they drive, wait as long as for
// anything else, so the reason they check does not depend on the machine's speed).
var exitWait = 2 * time.Second

// reason says why the agent died: the protocol error that ended it, or how its
// process exited (waiting up to exitWait for the exit status).
func (a *agentConn) reason() error {
	a.mu.Lock()
	why := a.why
	a.mu.Unlock()
	if why != nil {
		return why
	}
	select {
	case <-a.proc.done:
	case <-time.After(exitWait):
		return errors.New("the agent closed its connection")
	}
	return &AgentExitError{How: a.proc.exited(), Stderr: stderrtail.Telling(a.proc.tail.Last(40), 3)}
}

// name is how messages call the agent: its own name, else its command.
func (a *agentConn) name(cmd Command) string {
	if a != nil && a.init.AgentInfo != nil {
		if t := a.init.AgentInfo.Title; t != nil && *t != "" {
			return *t
		}
		if a.init.AgentInfo.Name != "" {
			return a.init.AgentInfo.Name
		}
	}
	return agentLabel(cmd)
}

func agentLabel(cmd Command) string {
	if cmd.Name != "" {
		return cmd.Name
	}
	p := cmd.Path
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	if p == "" {
		return "the agent"
	}
	return p
}

// spawn starts a new agent process and runs initialize. Errors are *protocol.Error:
// agent_unavailable (it cannot start, does not answer in time, or died) or
// agent_incompatible (another ACP version).
func (r *Runtime) spawn(gen int) (*agentConn, error) {
	label := agentLabel(r.opts.Agent)
	proc, err := startProcess(r.opts.Agent, r.guard, r.opts.GuardEnv, r.opts.Stderr, r.redactLine)
	if err != nil {
		return nil, agentError(protocol.CondAgentUnavailable, err.Error(), "Check the agent's command in Settings, Agents (Test shows what it answers).")
	}
	a := &agentConn{gen: gen, proc: proc, dead: make(chan struct{})}
	pr, pw := io.Pipe()
	var toAgent io.Writer = proc.stdin
	var fromAgent io.Writer = pw
	if r.opts.Transcript != nil {
		rec := &recorder{w: r.opts.Transcript}
		toAgent = io.MultiWriter(proc.stdin, rec.prefixed("> "))
		fromAgent = io.MultiWriter(pw, rec.prefixed("< "))
	}
	a.side = newSideCalls(toAgent)
	fromAgent = a.side.divert(fromAgent)
	a.conn = sdk.NewClientSideConnection(&client{r: r, a: a}, a.side.w, pr)
	a.conn.SetLogger(r.sdkLog)
	go func() {
		err := checkLines(proc.stdout, fromAgent)
		var pe *ProtocolError
		if errors.As(err, &pe) {
			r.log.Warn("the agent broke the protocol; stopping it", "reason", pe.Reason)
			a.fail(pe)
		}
		pw.Close()
	}()
	go func() {
		select {
		case <-a.conn.Done():
		case <-proc.done:
		}
		a.fail(nil)
	}()
	r.log.Info("agent started", "pid", proc.pid, "command", label, "generation", gen)

	ctx, cancel := context.WithTimeout(context.Background(), r.opts.StartTimeout)
	defer cancel()
	type initResult struct {
		resp sdk.InitializeResponse
		err  error
	}
	ch := make(chan initResult, 1)
	go func() {
		resp, err := a.conn.Initialize(ctx, sdk.InitializeRequest{
			ProtocolVersion: sdk.ProtocolVersionNumber,
			ClientCapabilities: sdk.ClientCapabilities{
				Fs:       sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
				Terminal: true,
				// Form elicitations become clarify cards (elicit.go); URLs are not opened.
				Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}},
			},
			ClientInfo: &sdk.Implementation{Name: "talaria", Title: sdk.Ptr("Talaria"), Version: r.opts.ClientVersion},
		})
		ch <- initResult{resp, err}
	}()
	var res initResult
	select {
	case res = <-ch:
	case <-a.dead:
		res = <-ch
	}
	if res.err != nil {
		var why string
		switch {
		case !a.alive():
			why = fmt.Sprintf("%s stopped while starting: %v", label, a.reason())
		case ctx.Err() != nil:
			why = fmt.Sprintf("%s did not answer ACP's initialize within %s", label, r.opts.StartTimeout)
		default:
			why = fmt.Sprintf("%s refused ACP's initialize: %s", label, requestMessage(res.err))
		}
		a.fail(errors.New(why))
		return nil, agentError(protocol.CondAgentUnavailable, why,
			"Check that the command starts an ACP server (for example `opencode acp`, `hermes acp`, `gemini --acp`), then use Test in Settings, Agents.")
	}
	if v := int(res.resp.ProtocolVersion); v != sdk.ProtocolVersionNumber {
		a.fail(fmt.Errorf("ACP version %d", v))
		return nil, agentError(protocol.CondAgentIncompatible,
			fmt.Sprintf("%s speaks ACP version %d; Talaria speaks version %d", label, v, sdk.ProtocolVersionNumber),
			"Update the agent (or Talaria) so both speak the same ACP version.")
	}
	a.init = res.resp
	name, version := label, ""
	if res.resp.AgentInfo != nil {
		name, version = res.resp.AgentInfo.Name, res.resp.AgentInfo.Version
	}
	r.log.Info("agent initialized", "agent", name, "version", version, "load_session", res.resp.AgentCapabilities.LoadSession,
		"resume", res.resp.AgentCapabilities.SessionCapabilities.Resume != nil)
	return a, nil
}

// recorder writes whole ACP lines, prefixed, to a transcript (Options.Transcript).
type recorder struct {
	mu sync.Mutex
	w  io.Writer
}

type prefixWriter struct {
	r      *recorder
	prefix string
}

func (r *recorder) prefixed(p string) io.Writer { return prefixWriter{r, p} }

// Write gets whole lines: the SDK writes one message per call, checkLines one line.
func (p prefixWriter) Write(b []byte) (int, error) {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	p.r.w.Write([]byte(p.prefix)) //nolint:errcheck // a debugging aid
	p.r.w.Write(b)                //nolint:errcheck // a debugging aid
	return len(b), nil
}

// agentError builds an application error: the message says what went wrong, the
// data's hint what to do.
func agentError(condition, msg, hint string) *protocol.Error {
	e := protocol.NewError(protocol.CodeApplication, condition, strings.TrimRight(strings.TrimSpace(msg), ".")+".")
	e.Data.Hint = hint
	return e
}

// requestMessage is an ACP error's own words: its message and, when it carries one,
// the detail in its data.
func requestMessage(err error) string {
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		return err.Error()
	}
	msg := re.Message
	switch d := re.Data.(type) {
	case string:
		if d != "" && d != msg {
			msg += ": " + d
		}
	case map[string]any:
		for _, k := range []string{"details", "message", "error"} {
			if s, ok := d[k].(string); ok && s != "" && s != msg {
				msg += ": " + s
				break
			}
		}
	}
	return preview([]byte(msg))
}

// isAuthRequired reports an ACP "authentication required" error (code -32000).
func isAuthRequired(err error) bool {
	var re *sdk.RequestError
	return errors.As(err, &re) && re.Code == -32000
}

// sdkLogger is the SDK's logger: warnings and errors only, under our component.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{h: log.Handler(), min: slog.LevelWarn}).With("component", "acp-sdk")
}

type levelFilter struct {
	h   slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.h.Enabled(ctx, l)
}
func (f levelFilter) Handle(ctx context.Context, r slog.Record) error { return f.h.Handle(ctx, r) }
func (f levelFilter) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFilter{h: f.h.WithAttrs(a), min: f.min}
}
func (f levelFilter) WithGroup(n string) slog.Handler {
	return levelFilter{h: f.h.WithGroup(n), min: f.min}
}
