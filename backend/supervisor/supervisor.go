package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"

	"talaria/sidecar/protocol"
)

// State is the supervisor's view of the sidecar.
type State string

// States of the sidecar as the window and the tray show them.
const (
	StateStarting   State = "starting"
	StateReady      State = "ready"
	StateRestarting State = "restarting"
	StateDown       State = "down"
	StateStopped    State = "stopped"
)

// Status is a snapshot of the sidecar's state (JSON for the window).
type Status struct {
	// RuntimeID is the host's id of the runtime this sidecar serves ("builtin",
	// "hermes:work", ...; Config.RuntimeID).
	RuntimeID      string `json:"runtime_id"`
	State          State  `json:"state"`
	Runtime        string `json:"runtime"`
	AgentVersion   string `json:"agent_version"`
	SidecarVersion string `json:"sidecar_version"`
	Python         string `json:"python"`
	Protocol       int    `json:"protocol"`
	// Dialect and Features are rpc.hello's: the agent interface's dialect (Hermes: A
	// or B) and feature flags.
	Dialect    string   `json:"dialect,omitempty"`
	Features   []string `json:"features,omitempty"`
	Attempt    int      `json:"attempt"`      // restart attempt, 0 when ready
	NextRetryS float64  `json:"next_retry_s"` // seconds until the next start, while restarting
	Error      string   `json:"error"`        // the last failure
	Hint       string   `json:"hint"`         // what the user can do about it
	PID        int      `json:"pid"`
	Restarts   int      `json:"restarts"`   // restarts since the app started
	StartedAt  int64    `json:"started_at"` // epoch ms of the current process start, 0 if none
	// Sandbox is what the runtime said in rpc.hello about confining commands (nil
	// before it said, or when it does not say).
	Sandbox *protocol.SandboxStatus `json:"sandbox"`
	// Capabilities are the methods the runtime listed in rpc.hello (nil before it
	// answered).
	Capabilities []string `json:"capabilities"`
	// Connection is protocol.LinkReconnecting while the ssh connection to a sidecar on
	// another machine is down and being made again (the sidecar and its turn go on
	// there); "" otherwise. Told by the link's stderr (protocol.LinkStatusPrefix).
	Connection string `json:"connection,omitempty"`
}

// Config configures a Supervisor. Zero durations take the defaults shown.
type Config struct {
	Command     string   // executable to run (the app's own binary for the built-in runtime)
	Args        []string // e.g. ["sidecar"]
	Env         []string // extra "K=V" entries added to the app's environment
	LogPath     string   // the sidecar's stderr goes here, rotated at 5 MB keeping 3; "" discards
	HostVersion string   // sent in rpc.hello
	RuntimeID   string   // the host's id of the runtime (Status.RuntimeID); "builtin" when ""
	// Prepare, when set, runs before each start of the process (a remote runtime
	// installs its sidecar on the host there); its error fails that start like a
	// missing executable, and its Hint() (when it has one) is what the user is told.
	Prepare func(ctx context.Context) error
	// Lost and LostHint, when set, are what a call cut short by the end of the
	// process's output says and what to do (a remote runtime: the connection to its
	// host was lost), instead of "its output ended: it crashed or was killed".
	Lost, LostHint string
	// FailFast makes a call waiting for the process fail as soon as a start attempt
	// fails, with that attempt's error and hint, instead of waiting through the
	// retries up to ReadyWait (a remote runtime: an attempt can take a minute, and
	// "host unreachable" is what the user needs to see).
	FailFast bool
	// ExplainExit, when set, turns the exit status and the last stderr lines of a
	// process that ended before answering rpc.hello into that start's error (a remote
	// runtime: ssh's reason, typed, with Hint() and Permanent()); nil keeps the
	// generic one.
	ExplainExit func(status int, stderr string) error

	MinBackoff       time.Duration // first restart delay: 0.5 s, doubling
	MaxBackoff       time.Duration // longest restart delay: 30 s
	HealthyAfter     time.Duration // a process that lived this long resets the back-off: 60 s
	PingInterval     time.Duration // rpc.ping period: 10 s
	PingTimeout      time.Duration // a ping slower than this counts as a hang: 5 s
	HelloTimeout     time.Duration // rpc.hello must answer within: 10 s
	ShutdownGrace    time.Duration // kill this long after closing stdin: 5 s
	ReadyWait        time.Duration // how long Call waits for a (re)starting sidecar: 15 s
	QuickFailure     time.Duration // a process that dies sooner counts as a quick failure: 10 s
	MaxQuickFailures int           // after this many quick failures in a row, stop retrying: 5
}

func (c *Config) defaults() {
	d := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	d(&c.MinBackoff, 500*time.Millisecond)
	d(&c.MaxBackoff, 30*time.Second)
	d(&c.HealthyAfter, 60*time.Second)
	d(&c.PingInterval, 10*time.Second)
	d(&c.PingTimeout, 5*time.Second)
	d(&c.HelloTimeout, 10*time.Second)
	d(&c.ShutdownGrace, 5*time.Second)
	d(&c.ReadyWait, 15*time.Second)
	d(&c.QuickFailure, 10*time.Second)
	if c.MaxQuickFailures == 0 {
		c.MaxQuickFailures = 5
	}
}

// Supervisor keeps one sidecar process running. Start it once; Call routes to the
// current process; Shutdown stops it for good.
type Supervisor struct {
	cfg    Config
	log    *slog.Logger
	stderr *LineRing
	logw   io.WriteCloser

	mu        sync.Mutex
	client    *Client
	status    Status
	ready     chan struct{} // closed while State is ready; replaced when it leaves ready
	changed   chan struct{} // closed and replaced at every status change
	readies   int           // how many times State became ready
	failures  int           // start attempts that failed before ready (FailFast)
	listeners []func(Status)
	onNotify  func(method string, params json.RawMessage)

	restart chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}

	// needed is closed by the first call that waits for a process (waitClient): a
	// launch held by StartHeld goes at once then.
	needed     chan struct{}
	neededOnce sync.Once
}

// New returns a stopped supervisor; call Start.
func New(cfg Config, log *slog.Logger) *Supervisor {
	cfg.defaults()
	s := &Supervisor{cfg: cfg, log: log, stderr: NewLineRing(500),
		ready: make(chan struct{}), changed: make(chan struct{}), restart: make(chan struct{}, 1), done: make(chan struct{}), needed: make(chan struct{})}
	s.status.State = StateStopped
	s.status.RuntimeID = cfg.RuntimeID
	if s.status.RuntimeID == "" {
		s.status.RuntimeID = "builtin"
	}
	if cfg.LogPath != "" {
		s.logw = &lumberjack.Logger{Filename: cfg.LogPath, MaxSize: 5, MaxBackups: 3}
	}
	return s
}

// OnStatus registers fn to be called (synchronously, in order) on every status change.
// Register before Start.
func (s *Supervisor) OnStatus(fn func(Status)) {
	s.mu.Lock()
	s.listeners = append(s.listeners, fn)
	s.mu.Unlock()
}

// OnNotification registers fn for the sidecar's notifications outside requests
// ($/session_event); it runs on the connection's read loop and must not block.
// Register before Start.
func (s *Supervisor) OnNotification(fn func(method string, params json.RawMessage)) {
	s.mu.Lock()
	s.onNotify = fn
	s.mu.Unlock()
}

// Status returns the current status.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// StderrTail returns up to the last 500 lines the sidecar wrote to stderr.
func (s *Supervisor) StderrTail() []string { return s.stderr.Lines() }

// Start launches the supervision loop; it returns at once.
func (s *Supervisor) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	// Starting at once, so a call made right after Start waits for the sidecar instead
	// of being refused as "not running".
	s.setStatus(func(st *Status) { st.State = StateStarting })
	go s.loop(ctx)
}

// StartHeld is Start with the first launch held back until launch is closed, a call
// needs the sidecar, or hold has passed, whichever comes first. The status is
// "starting" meanwhile, and calls wait as they do during any start. The desktop app
// holds the launch until its window has painted: spawning the sidecar (a second Go
// process) while the webview loads its page cost ~70 ms of a ~550 ms cold start on 2
// cores (issue 16). Restarts are never held.
func (s *Supervisor) StartHeld(ctx context.Context, launch <-chan struct{}, hold time.Duration) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.setStatus(func(st *Status) { st.State = StateStarting })
	go func() {
		t := time.NewTimer(hold)
		defer t.Stop()
		select {
		case <-launch:
		case <-s.needed:
		case <-s.restart: // Restart agent: start now
		case <-t.C:
		case <-ctx.Done():
			s.setStatus(func(st *Status) { st.State = StateStopped })
			close(s.done)
			return
		}
		s.loop(ctx)
	}()
}

// Restart stops the current process (gracefully) and starts a new one at once, also
// from the down state.
func (s *Supervisor) Restart() {
	select {
	case s.restart <- struct{}{}:
	default:
	}
}

// Shutdown stops supervision: the sidecar's stdin is closed, and the process is killed
// if it has not exited after ShutdownGrace. It returns when the process is gone or ctx
// ends.
func (s *Supervisor) Shutdown(ctx context.Context) error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	select {
	case <-s.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.logw != nil {
		_ = s.logw.Close()
	}
	return nil
}

// Call runs method on the current sidecar (see Client.Call). While the sidecar starts
// or restarts it waits up to ReadyWait; when it is down or does not come up it returns a
// *protocol.Error with condition sidecar_unavailable whose message says why. A call
// that never reached a live process (UndeliveredError: it was sent to a sidecar that
// had just died, before the supervisor noticed) is sent once more to the restarted one.
func (s *Supervisor) Call(ctx context.Context, method string, params any, onFrame FrameFunc, result any) error {
	var failed *Client
	for {
		c, err := s.waitClient(ctx, failed)
		if err != nil {
			return err
		}
		err = c.Call(ctx, method, params, onFrame, result)
		var ud *UndeliveredError
		if failed == nil && errors.As(err, &ud) && ctx.Err() == nil {
			failed = c
			s.log.Info("sidecar died before it got a call; sending it to the restarted one", "method", method, "why", ud.Err.Message)
			continue
		}
		return err
	}
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// waitClient returns the ready sidecar's client, never not (a client whose call
// could not be delivered; nil for none).
func (s *Supervisor) waitClient(ctx context.Context, not *Client) (*Client, error) {
	s.neededOnce.Do(func() { close(s.needed) })
	t := time.NewTimer(s.cfg.ReadyWait)
	defer t.Stop()
	s.mu.Lock()
	failures0 := s.failures
	s.mu.Unlock()
	for {
		s.mu.Lock()
		st, c, ready, changed, failures := s.status, s.client, s.ready, s.changed, s.failures
		s.mu.Unlock()
		if s.cfg.FailFast && st.State == StateRestarting && st.Error != "" && failures != failures0 {
			// A start attempt failed while this call waited (not the death of a
			// process that had answered: its successor may well start).
			e := unavailable(st.Error) // "could not start the agent process: ..."
			e.Data.Hint = st.Hint
			return nil, e
		}
		if !s.cfg.FailFast {
			changed = nil
		}
		if st.State == StateReady {
			var dead <-chan struct{}
			if c == nil || c == not {
				dead = closedChan // detached or known dead, its successor not up yet
			} else {
				dead = c.Dead()
			}
			select {
			case <-dead:
				// The process is going; wait for the supervisor to notice and restart.
				select {
				case <-time.After(10 * time.Millisecond):
					continue
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-t.C:
					return nil, unavailable("the agent process did not restart in time")
				}
			default:
				return c, nil
			}
		}
		if st.State == StateDown || st.State == StateStopped {
			msg := "the agent process is not running"
			if st.Error != "" {
				msg += ": " + st.Error
			}
			e := unavailable(msg)
			e.Data.Hint = st.Hint // what to do, when the supervisor stopped retrying for a reason it knows
			return nil, e
		}
		select {
		case <-ready:
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, unavailable("the agent process did not start in time")
		}
	}
}

func (s *Supervisor) setStatus(mut func(st *Status)) {
	s.mu.Lock()
	was := s.status.State
	mut(&s.status)
	st := s.status
	if was == StateReady && st.State != StateReady {
		s.ready = make(chan struct{})
	} else if was != StateReady && st.State == StateReady {
		close(s.ready)
		s.readies++
	}
	close(s.changed)
	s.changed = make(chan struct{})
	ls := append([]func(Status){}, s.listeners...)
	s.mu.Unlock()
	for _, fn := range ls {
		fn(st)
	}
}

func (s *Supervisor) backoff(attempt int) time.Duration {
	d := s.cfg.MinBackoff
	for i := 1; i < attempt && d < s.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.cfg.MaxBackoff)
}

var errRestartRequested = errors.New("restart requested")

func (s *Supervisor) loop(ctx context.Context) {
	defer close(s.done)
	attempt, quick := 0, 0
	for {
		s.setStatus(func(st *Status) {
			if st.State != StateRestarting {
				st.State = StateStarting
			}
			st.NextRetryS = 0
		})
		began := time.Now()
		s.mu.Lock()
		readies := s.readies
		s.mu.Unlock()
		err := s.runOnce(ctx)
		s.mu.Lock()
		if s.readies == readies {
			s.failures++ // it never answered: a failed start, not a death after ready
		}
		s.mu.Unlock()
		if ctx.Err() != nil {
			s.setStatus(func(st *Status) { st.State = StateStopped; st.PID = 0; st.StartedAt = 0 })
			return
		}
		if errors.Is(err, errRestartRequested) {
			attempt, quick = 0, 0
			s.setStatus(func(st *Status) { st.State = StateStarting; st.Restarts++; st.Attempt = 0; st.NextRetryS = 0 })
			continue
		}
		lived := time.Since(began)
		if lived >= s.cfg.HealthyAfter {
			attempt, quick = 0, 0
		}
		if lived < s.cfg.QuickFailure {
			quick++
		} else {
			quick = 0
		}
		msg, hint := describeFailure(err, s.cfg)
		s.log.Warn("sidecar stopped", "err", err, "lived", lived.Round(time.Millisecond), "quick_failures", quick)
		var pe *protocol.Error
		var perm interface{ Permanent() bool }
		if (errors.As(err, &pe) && pe.Condition() == protocol.CondAgentIncompatible) ||
			(errors.As(err, &perm) && perm.Permanent()) {
			quick = s.cfg.MaxQuickFailures // retrying cannot help
		}
		if quick >= s.cfg.MaxQuickFailures {
			s.setStatus(func(st *Status) {
				st.State, st.Error, st.PID, st.StartedAt, st.NextRetryS = StateDown, msg, 0, 0, 0
				st.Hint = hint + " Talaria stopped retrying after " + fmt.Sprint(quick) + " quick failures; fix the cause, then use Restart agent."
			})
			select {
			case <-ctx.Done():
				s.setStatus(func(st *Status) { st.State = StateStopped })
				return
			case <-s.restart:
				attempt, quick = 0, 0
				s.setStatus(func(st *Status) { st.State = StateStarting; st.Restarts++ })
				continue
			}
		}
		attempt++
		delay := s.backoff(attempt)
		s.setStatus(func(st *Status) {
			st.State, st.Attempt, st.NextRetryS = StateRestarting, attempt, delay.Seconds()
			st.Error, st.Hint, st.PID, st.StartedAt = msg, hint, 0, 0
		})
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			s.setStatus(func(st *Status) { st.State = StateStopped })
			return
		case <-s.restart:
			t.Stop()
			attempt = 0
		case <-t.C:
		}
		s.setStatus(func(st *Status) { st.Restarts++ })
	}
}

// startError marks a failure to spawn the process at all.
type startError struct{ err error }

func (e *startError) Error() string { return "could not start the agent process: " + e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

func describeFailure(err error, cfg Config) (msg, hint string) {
	var se *startError
	var pe *protocol.Error
	switch {
	case errors.As(err, &se) && hinted(se.err) != "":
		return se.Error(), hinted(se.err)
	case errors.As(err, &se):
		return se.Error(), fmt.Sprintf("Check that %s exists and is executable; reinstalling Talaria restores it.", cfg.Command)
	case errors.As(err, &pe) && pe.Data != nil && pe.Data.Hint != "":
		// The sidecar knows what is wrong with its agent (Hermes not installed, too old).
		return pe.Message, pe.Data.Hint
	case errors.As(err, &pe) && pe.Condition() == protocol.CondAgentIncompatible:
		return pe.Message, "The agent speaks another protocol version than this app: update Talaria and the agent together."
	case err != nil:
		return err.Error(), "Talaria restarts the agent automatically. If this repeats, open the sidecar log in the logs folder."
	}
	return "the agent process exited", "Talaria restarts the agent automatically."
}

// hinted returns the Hint() of the first error in err's chain that has one ("" when
// none does).
func hinted(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// runOnce spawns one sidecar process and supervises it until it exits, hangs, a
// restart is requested, or ctx ends.
func (s *Supervisor) runOnce(ctx context.Context) error {
	if s.cfg.Prepare != nil {
		if err := s.cfg.Prepare(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &startError{err}
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return &startError{err}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return &startError{err}
	}
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Env = append(os.Environ(), s.cfg.Env...)
	cmd.Stdin, cmd.Stdout = inR, outW
	runErr := NewLineRing(20) // this process's own last lines (ExplainExit)
	// A link to another machine says when its connection drops and comes back.
	var current atomic.Bool
	current.Store(true)
	defer func() {
		current.Store(false)
		s.mu.Lock()
		was := s.status.Connection
		s.mu.Unlock()
		if was != "" {
			s.setStatus(func(st *Status) { st.Connection = "" })
		}
	}()
	link := &lineWatch{fn: func(line string) {
		state, ok := strings.CutPrefix(line, protocol.LinkStatusPrefix)
		if !ok || !current.Load() {
			return
		}
		if state != protocol.LinkReconnecting {
			state = ""
		}
		s.setStatus(func(st *Status) { st.Connection = state })
	}}
	var errSink io.Writer = io.MultiWriter(s.stderr, runErr, link)
	if s.logw != nil {
		errSink = io.MultiWriter(s.logw, s.stderr, runErr, link)
	}
	cmd.Stderr = errSink
	setParentDeathSignal(cmd)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return &startError{err}
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	client := NewClient(outR, inW, s.log)
	if s.cfg.Lost != "" {
		client.ExplainEnd(s.cfg.Lost, s.cfg.LostHint)
	}
	s.mu.Lock()
	notify := s.onNotify
	s.mu.Unlock()
	if notify != nil {
		client.OnNotify(notify)
	}
	s.log.Info("sidecar started", "pid", cmd.Process.Pid, "command", s.cfg.Command)
	// stop ends the process: stdin EOF first, a kill after the grace period.
	stop := func(grace time.Duration) error {
		_ = client.Close()
		t := time.NewTimer(grace)
		defer t.Stop()
		var werr error
		select {
		case werr = <-exited:
		case <-t.C:
			s.log.Warn("sidecar did not exit after stdin closed; killing", "pid", cmd.Process.Pid)
			_ = cmd.Process.Kill()
			werr = <-exited
		}
		s.detach(client, outR)
		return werr
	}

	hctx, hcancel := context.WithTimeout(ctx, s.cfg.HelloTimeout)
	var hello protocol.HelloResult
	err = client.Call(hctx, protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version, HostVersion: s.cfg.HostVersion}, nil, &hello)
	hcancel()
	if err == nil && hello.Protocol != protocol.Version {
		err = protocol.NewError(0, protocol.CondAgentIncompatible,
			fmt.Sprintf("agent speaks protocol %d, this app speaks %d", hello.Protocol, protocol.Version))
	}
	if err != nil {
		werr := stop(time.Second)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ee *exec.ExitError
		if s.cfg.ExplainExit != nil && errors.As(werr, &ee) {
			if e := s.cfg.ExplainExit(ee.ExitCode(), strings.Join(runErr.Lines(), "\n")); e != nil {
				return &startError{e}
			}
		}
		return fmt.Errorf("rpc.hello failed: %w", err)
	}

	s.mu.Lock()
	s.client = client
	s.mu.Unlock()
	s.setStatus(func(st *Status) {
		st.State, st.Runtime, st.AgentVersion, st.SidecarVersion = StateReady, hello.Runtime, hello.AgentVersion, hello.SidecarVersion
		st.Python, st.Protocol, st.PID, st.StartedAt = hello.Python, hello.Protocol, cmd.Process.Pid, time.Now().UnixMilli()
		st.Dialect, st.Features = hello.Dialect, hello.Features
		st.Sandbox = hello.Sandbox
		st.Capabilities = hello.Capabilities
		st.Attempt, st.NextRetryS, st.Error, st.Hint, st.Connection = 0, 0, "", "", ""
	})

	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case werr := <-exited:
			s.detach(client, outR)
			if werr == nil {
				return errors.New("the agent process exited")
			}
			return fmt.Errorf("the agent process exited: %w", werr)
		case <-client.Dead():
			// stdout closed: the process is dying or broke its output; replace it.
			s.setStatus(func(st *Status) { st.State = StateRestarting })
			werr := stop(s.cfg.ShutdownGrace)
			return fmt.Errorf("the agent process closed its output (exit: %v)", werr)
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(ctx, s.cfg.PingTimeout)
			var pr protocol.PingResult
			perr := client.Call(pctx, protocol.MethodPing, nil, nil, &pr)
			pcancel()
			if perr != nil && ctx.Err() == nil {
				s.log.Warn("sidecar failed its health check; killing it", "err", perr)
				_ = cmd.Process.Kill()
				<-exited
				s.detach(client, outR)
				return fmt.Errorf("the agent process stopped answering: %w", perr)
			}
		case <-s.restart:
			s.setStatus(func(st *Status) { st.State = StateRestarting })
			_ = stop(s.cfg.ShutdownGrace)
			return errRestartRequested
		case <-ctx.Done():
			s.setStatus(func(st *Status) { st.State = StateStopped })
			_ = stop(s.cfg.ShutdownGrace)
			return ctx.Err()
		}
	}
}

// detach forgets client and makes sure its reader ends (and so its in-flight calls fail
// with sidecar_unavailable) even if a grandchild still holds the pipe open.
func (s *Supervisor) detach(client *Client, outR *os.File) {
	s.mu.Lock()
	if s.client == client {
		s.client = nil
	}
	s.mu.Unlock()
	select {
	case <-client.Dead():
	case <-time.After(time.Second):
		_ = outR.Close()
		<-client.Dead()
	}
	_ = outR.Close()
}
