// Package turn runs turns: it admits a user message into a session, calls the
// sidecar's chat.start with the session's history, normalises and coalesces the frames
// it streams, journals each one before publishing it, and settles the turn in the
// store when the sidecar's result arrives.
package turn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"talaria/backend/bus"
	"talaria/backend/pending"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/sidecar/protocol"
	"talaria/sidecar/protocol/redact"
)

// Caller is the part of the supervisor the runner uses (supervisor.Supervisor
// implements it).
type Caller interface {
	Call(ctx context.Context, method string, params any, onFrame supervisor.FrameFunc, result any) error
}

// Config is what one turn needs besides the history, resolved when it is admitted.
type Config struct {
	Model         string
	Provider      protocol.Provider
	Workspace     string // absolute directory the agent works in
	SystemMessage string
	MaxIterations int
	Yolo          bool // approvals off for this session
	// ApprovalTimeoutS and ClarifyTimeoutS bound how long the agent waits for the user
	// (seconds; 0 = the runtime's defaults, 300 and 3600).
	ApprovalTimeoutS, ClarifyTimeoutS int
	Allowlist                         []string // dangerous-pattern keys allowed always or for this session
	// EnabledToolsets limits the tools offered (nil: all of them). A name the runtime
	// does not know offers nothing, so []string{"none"} turns tools off.
	EnabledToolsets []string
	// Ephemeral marks a throwaway turn (a side question); sent as chat.start's ephemeral.
	Ephemeral bool
	// NoTitle skips the model-made title after the first exchange (hidden sessions).
	NoTitle bool
	// Runtime is the id of the runtime the turn runs on (store.Session.Runtime); Caller
	// is that runtime's sidecar (nil: the Runner's own caller, the built-in runtime).
	// Every call of the turn (chat.start, steers) goes to Caller.
	Runtime string
	Caller  Caller
	// StageFile, when set, copies a file of a message (an image attachment, by its
	// path here and SHA-256) to where the runtime runs and returns its path there
	// (a runtime on another machine, core.Stager); nil: the runtime reads paths here.
	StageFile func(path, sha256 string) (string, error)
	// AgentSessionID is the runtime's own session to resume (chat.start's
	// agent_session_id); "" starts one.
	AgentSessionID string
	// AgentMode and AgentModel are the chat's choices in an ACP agent's pickers
	// (chat.start's agent_mode and agent_model); "" keeps the agent's own.
	AgentMode, AgentModel string
	// MCPServers are the MCP servers the chat enables, secrets resolved (chat.start's
	// mcp_servers).
	MCPServers []protocol.MCPServer
	// OwnModel marks a runtime that brings its own model (Hermes, ACP agents): Model
	// and Provider may be empty, and no aux.complete is asked of the built-in runtime
	// for the chat's title (it is made locally unless the agent names the chat).
	OwnModel bool
	// Title is a title the user set, sent to a runtime that keeps titles itself
	// (Hermes); "" lets the agent name the chat.
	Title string
	// Sandbox confines the turn's commands and file tools (chat.start's sandbox): the
	// session's policy, with the data folder among the hidden paths.
	Sandbox *protocol.SandboxPolicy
	// ReasoningEffort and MaxOutputTokens are the chat's options (chat.start's
	// reasoning_effort and max_output_tokens; "" and 0: the provider's defaults).
	ReasoningEffort string
	MaxOutputTokens int
	// StreamIdleTimeoutS is how long a model call's stream may send nothing before the
	// built-in runtime gives up on it (seconds; 0: the runtime's default, 120).
	StreamIdleTimeoutS int
	// Images reports that the runtime takes image parts (its rpc.hello feature
	// "images"); Vision what is known of the model: VisionYes, VisionNo or
	// VisionUnknown. A message with images is refused unless the runtime takes them and
	// the model is not known to refuse them; images in the history are left out (a note
	// in their place) for a model that takes none.
	Images bool
	Vision Vision
	// ContextLength is the model's context window in tokens (0: unknown); CompactAt the
	// fraction of it (0 < x < 1) past which older turns are summarised before the turn
	// (0: never). See compact.go.
	ContextLength int64
	CompactAt     float64
	// Price, when set, is the user's price of the model: a turn whose provider reports
	// no cost is costed with it (never a guessed price).
	Price *Price
	// Redaction carries the fingerprints of every secret the host knows (chat.start's
	// redaction), so the runtime redacts them from tool output too.
	Redaction *protocol.Redaction
}

// Vision says whether a model takes images.
type Vision int

// Vision values.
const (
	VisionUnknown Vision = iota // the provider publishes nothing about it
	VisionYes
	VisionNo
)

// Price is a model's price in US dollars per million tokens. CachedInput applies to
// cache reads when set (else Input does).
type Price struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CachedInput float64 `json:"cached_input,omitempty"`
}

// Cost returns what u costs at p, in US dollars.
func (p Price) Cost(u protocol.Usage) float64 {
	cached := min(u.CacheReadTokens, u.InputTokens)
	cachedPrice := p.Input
	if p.CachedInput > 0 {
		cachedPrice = p.CachedInput
	}
	return (float64(u.InputTokens-cached)*p.Input + float64(cached)*cachedPrice + float64(u.OutputTokens)*p.Output) / 1e6
}

// Input is a message to send: its text and files and, for a retry or an edit, where it
// replaces the transcript.
type Input struct {
	Text string
	// Attachments are sent with the message: staged ones by their ID (and SessionID),
	// others (a retry resending a message's files) by their fields.
	Attachments []store.Attachment
	// Model, when not "", answers this turn instead of the chat's model (a retry with
	// another model); the chat's model is unchanged.
	Model string
	// Replace, when set, replaces the rows from Replace.From on with this message (a
	// retry or an edit), if the session is still at Replace.BaseRevision.
	Replace *Replace
}

// Replace says which rows an Input replaces: From (a position) to the end, checked
// against BaseRevision (store.ConflictError when the chat moved on).
type Replace struct {
	From         int
	BaseRevision int64
}

// ConfigFunc resolves the Config for a session. Its error is returned by StartTurn
// before anything is saved (e.g. *NotConfiguredError).
type ConfigFunc func(ctx context.Context, s store.Session) (Config, error)

// Frame is one event of a stream as the window and the journal see it. Seq is the
// journal's number: 1 for the stream's first frame, +1 per frame.
type Frame struct {
	SessionID string          `json:"session_id"`
	StreamID  string          `json:"stream_id"`
	Seq       int64           `json:"seq"`
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data" ts:"unknown"`
}

// Started is StartTurn's answer: the new stream and the saved user row.
type Started struct {
	StreamID    string        `json:"stream_id"`
	UserMessage store.Message `json:"user_message"`
}

// ErrEmptyMessage is returned by StartTurn for a message with no text.
var ErrEmptyMessage = errors.New("the message is empty: type something to send")

// ImagesRefusedError is returned by Start for a message with images that cannot be
// sent: the runtime takes none, or the model is known to take none.
type ImagesRefusedError struct {
	Model   string
	Runtime bool // the runtime, not the model, takes no images
}

func (e *ImagesRefusedError) Error() string {
	if e.Runtime {
		return "this chat's agent runtime takes no images: remove the images, or move the chat to the built-in runtime"
	}
	return fmt.Sprintf("the model %s does not take images: choose a model that does in the chat's settings, or remove the images", e.Model)
}

// NotConfiguredError is returned by a ConfigFunc when no model or endpoint is set.
type NotConfiguredError struct{ What string }

func (e *NotConfiguredError) Error() string {
	return "no " + e.What + " is configured: open Settings and choose a provider and model"
}

// DefaultCoalesce is the shortest gap between two text frames of one stream sent to
// the window: 50 ms (the window renders a streaming answer at most every 150 ms, and
// each frame costs the window an event to handle). Deltas that arrive faster are joined.
const DefaultCoalesce = 50 * time.Millisecond

// Runner admits, runs and settles turns. All methods are safe for concurrent use.
type Runner struct {
	store  *store.Store
	caller Caller
	bus    *bus.Bus
	config ConfigFunc
	log    *slog.Logger

	// Coalesce is the text-frame coalescing window (DefaultCoalesce when zero).
	Coalesce time.Duration
	// Redact, when set, removes known secrets from every frame and saved row.
	Redact func([]byte) []byte
	// Audit, when set, records every approval decision of every turn (the approval
	// audit log): asked and answered, timed out, interrupted, or decided without asking
	// (approval_auto). The runner fills the session, stream, runtime, sandbox policy and
	// what was decided; the subject is redacted.
	Audit func(e store.AuditEntry)
	// Secrets, when set, is what redaction knows now: text deltas are redacted as one
	// stream (a secret the model prints over several deltas is found before the journal
	// and the window get any of it).
	Secrets func() *redact.Set
	// VaultStatus, when set, tells a vault clarify whether a saved secret exists.
	VaultStatus func(name string) VaultStatus
	// Parts, when set, builds the content parts of a row with attachments (text files
	// inline, images as image_file parts); nil parts send the row's text as it is.
	Parts func(store.Message) ([]protocol.ContentPart, error)

	pending *pending.Queues
	titles  bool
	closing bool // guarded by mu: Shutdown began, no follow-up turns
	// delivered remembers steers of ended runs that reached the agent (guarded by mu).
	delivered map[string]bool
	followUps map[string]int // sessions with a follow-up turn being started (guarded by mu)

	mu   sync.Mutex
	live map[string]*run // by stream id
	wg   sync.WaitGroup
}

// New returns a Runner.
func New(st *store.Store, caller Caller, b *bus.Bus, config ConfigFunc, log *slog.Logger) *Runner {
	return &Runner{store: st, caller: caller, bus: b, config: config, log: log, live: map[string]*run{}, pending: pending.New(), titles: true, followUps: map[string]int{}}
}

// SetAutoTitles turns model-made session titles on (the default) or off.
func (r *Runner) SetAutoTitles(on bool) { r.titles = on }

// Pending returns the approval and clarify queues the runner fills.
func (r *Runner) Pending() *pending.Queues { return r.pending }

type run struct {
	sessionID, streamID string
	cfg                 Config
	userText            string
	compact             *compaction // older turns to summarise before chat.start (compact.go)
	firstExchange       bool        // the session had no user message before this turn
	agentTitled         bool        // the agent named the session during the turn (agent_title)
	cancel              context.CancelFunc
	userCancelled       bool // guarded by Runner.mu
	settling            bool // guarded by Runner.mu: the result is in, no more steers
	steer               steerState
	steerEmitMu         sync.Mutex
	started             time.Time
	done                chan struct{}

	emitMu sync.Mutex
	seq    int64
	ended  bool // stream_end was emitted: later frames are dropped
	// backlog holds journal frames a locked or full database refused, in order, until
	// retryJournal writes them (guarded by emitMu).
	backlog         []store.JournalFrame
	journalRetrying bool

	// Only the run's own goroutines touch these.
	text, reasoning strings.Builder
	tokenFrames     int64
	firstToken      time.Time
	lastToken       time.Time
	usage           protocol.Usage
	lastMetering    time.Time
	toolStarts      map[string]time.Time
	tools           []seenTool                       // the tool calls the turn showed, for partialRows (at most maxSeenTools)
	approvals       map[string]protocol.ApprovalData // asked and not yet resolved, for the audit log
	status          string                           // the last run_status sent
	agentSession    string                           // the agent session id last stored
}

// StartTurn admits text as the next user message of sessionID and starts the turn (see
// Start).
func (r *Runner) StartTurn(ctx context.Context, sessionID, text string) (Started, error) {
	return r.Start(ctx, sessionID, Input{Text: text})
}

// Start admits in as the next user message of sessionID (with in.Replace, in place of
// the rows from a position on) and starts the turn. It returns as soon as the user
// row is saved. Errors: ErrEmptyMessage (no text and no files); store.ErrNotFound;
// *store.BusyError when the session already streams (the error names that stream);
// *store.ConflictError when in.Replace's revision is stale; *ImagesRefusedError;
// whatever the ConfigFunc or Parts return; store errors (store.ErrInvalid for an
// attachment no longer staged).
func (r *Runner) Start(ctx context.Context, sessionID string, in Input) (Started, error) {
	text := in.Text
	if strings.TrimSpace(text) == "" && len(in.Attachments) == 0 {
		return Started{}, ErrEmptyMessage
	}
	if len(text) > MaxMessageBytes {
		return Started{}, &MessageTooLongError{Bytes: len(text), Limit: MaxMessageBytes}
	}
	sess, err := r.store.GetSession(ctx, sessionID)
	if err != nil {
		return Started{}, err
	}
	if sess.ActiveStreamID != "" {
		return Started{}, &store.BusyError{SessionID: sessionID, StreamID: sess.ActiveStreamID}
	}
	if in.Model != "" {
		sess.Model = in.Model
	}
	cfg, err := r.config(ctx, sess)
	if err != nil {
		return Started{}, err
	}
	// A turn reads the rows from the chat's latest summary on (history[i] is at position
	// base+i), not the whole transcript. A retry or an edit reads every row: the rows it
	// replaces may hold that summary.
	var history []store.Message
	base := 0
	if in.Replace == nil {
		history, base, err = r.store.MessagesForTurn(ctx, sessionID)
	} else {
		history, err = r.store.Messages(ctx, sessionID)
	}
	if err != nil {
		return Started{}, err
	}
	if in.Replace != nil {
		if in.Replace.From < 0 || in.Replace.From > len(history) {
			return Started{}, fmt.Errorf("position %d is not in the chat: %w", in.Replace.From, store.ErrInvalid)
		}
		history = history[:in.Replace.From]
	}
	user := store.Message{Role: "user", Content: text, Attachments: in.Attachments}
	userParts, err := r.userParts(user, cfg)
	if err != nil {
		return Started{}, err
	}
	hist, summary, err := r.history(history, base, cfg)
	if err != nil {
		return Started{}, err
	}
	compact := r.planCompaction(ctx, sessionID, history, base, cfg, user)
	streamID := uuid.NewString()
	if in.Replace != nil {
		user, err = r.store.AdmitTurnReplacing(ctx, sessionID, streamID, in.Replace.From, in.Replace.BaseRevision, user)
	} else {
		user, err = r.store.AdmitTurn(ctx, sessionID, streamID, user)
	}
	if err != nil {
		return Started{}, err
	}
	// The user's own message lifts the hold a Stop put on automatic turns.
	if err := r.store.SetStopHold(ctx, sessionID, false); err != nil {
		r.log.Warn("clearing the stop hold", "session", sessionID, "err", err)
	}

	rctx, cancel := context.WithCancel(context.Background())
	rn := &run{sessionID: sessionID, streamID: streamID, cfg: cfg, userText: text, firstExchange: base == 0 && !hasUserRow(history),
		compact: compact, cancel: cancel, started: time.Now(), done: make(chan struct{})}
	r.mu.Lock()
	r.live[streamID] = rn
	r.mu.Unlock()
	r.wg.Add(1)

	r.emit(rn, protocol.EvUserMessage, UserMessageData{Message: user})
	r.setStatus(rn, "working", nil)
	if sess.Title == "" {
		title := ProvisionalTitle(text)
		if title == "" && len(user.Attachments) > 0 {
			title = ProvisionalTitle(user.Attachments[0].Name)
		}
		if err := r.store.SetTitle(ctx, sessionID, title, false); err == nil && title != "" {
			r.emit(rn, protocol.EvTitle, TitleData{Title: title})
		}
	}
	r.bus.Publish(bus.Event{Name: bus.EventSessionsChanged})

	params := protocol.ChatStartParams{
		SessionID: sessionID, StreamID: streamID, Workspace: cfg.Workspace, Model: cfg.Model,
		Provider: cfg.Provider, UserMessage: text, UserParts: userParts, ConversationHistory: hist,
		SystemMessage: cfg.SystemMessage, EphemeralSystemPrompt: summaryPrompt(summary), MaxIterations: cfg.MaxIterations,
		Yolo: cfg.Yolo, ApprovalAllowlist: cfg.Allowlist,
		ApprovalTimeoutS: cfg.ApprovalTimeoutS, ClarifyTimeoutS: cfg.ClarifyTimeoutS,
		EnabledToolsets: cfg.EnabledToolsets, Ephemeral: cfg.Ephemeral, Sandbox: cfg.Sandbox, Redaction: cfg.Redaction,
		AgentSessionID: cfg.AgentSessionID, Title: cfg.Title, MCPServers: cfg.MCPServers,
		ReasoningEffort: cfg.ReasoningEffort, MaxOutputTokens: cfg.MaxOutputTokens, StreamIdleTimeoutS: cfg.StreamIdleTimeoutS,
		AgentMode: cfg.AgentMode, AgentModel: cfg.AgentModel,
	}
	if dropped, capped := fitLine(&params, maxParamsBytes); dropped+capped > 0 {
		r.log.Warn("history cut to fit the protocol's line limit", "stream", streamID, "dropped", dropped, "capped", capped)
		r.emit(rn, protocol.EvWarning, map[string]any{"type": "history_trimmed",
			"message": historyNote(dropped, capped)})
	}
	go r.execute(rctx, rn, params)
	return Started{StreamID: streamID, UserMessage: user}, nil
}

// MaxMessageBytes is the longest message text StartTurn takes: 1 MiB. A longer paste
// is refused before anything is saved (attach it as a file instead).
const MaxMessageBytes = 1 << 20

// MessageTooLongError is returned by Start for a message over MaxMessageBytes.
type MessageTooLongError struct{ Bytes, Limit int }

func (e *MessageTooLongError) Error() string {
	return fmt.Sprintf("the message is %.1f MiB; messages up to %d MiB are sent: attach the text as a file, or send a shorter part",
		float64(e.Bytes)/(1<<20), e.Limit>>20)
}

// Cancel stops the turn of streamID. The turn settles with its partial text kept and a
// cancel frame. Cancelling a stream that already ended, or twice, is a no-op (nil).
func (r *Runner) Cancel(streamID string) error {
	r.mu.Lock()
	rn := r.live[streamID]
	if rn != nil {
		rn.userCancelled = true
	}
	r.mu.Unlock()
	if rn != nil {
		// Held until the user's next message: no automatic turn starts meanwhile,
		// also after a restart.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := r.store.SetStopHold(ctx, rn.sessionID, true); err != nil {
			r.log.Warn("setting the stop hold", "session", rn.sessionID, "err", err)
		}
		cancel()
		rn.cancel()
	}
	return nil
}

// Live reports whether streamID is running in this process.
func (r *Runner) Live(streamID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[streamID] != nil
}

// Busy reports whether a turn of sessionID runs in this process or a follow-up turn
// for it is being started.
func (r *Runner) Busy(sessionID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runOfLocked(sessionID) != nil || r.followUps[sessionID] > 0
}

// Wait blocks until the turn of streamID has settled (at once when it is not live).
func (r *Runner) Wait(ctx context.Context, streamID string) error {
	r.mu.Lock()
	rn := r.live[streamID]
	r.mu.Unlock()
	if rn == nil {
		return nil
	}
	select {
	case <-rn.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown cancels every live turn and waits until each has settled, or ctx ends.
func (r *Runner) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closing = true
	for _, rn := range r.live {
		rn.userCancelled = true
		rn.cancel()
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// StreamSince returns the journaled frames of streamID with seq > afterSeq, in order,
// so a window that missed some catches up.
func (r *Runner) StreamSince(ctx context.Context, streamID string, afterSeq int64) ([]Frame, error) {
	rows, err := r.store.JournalSince(ctx, streamID, afterSeq)
	if err != nil {
		return nil, err
	}
	out := make([]Frame, len(rows))
	for i, f := range rows {
		out[i] = Frame{SessionID: f.SessionID, StreamID: f.StreamID, Seq: f.Seq, Event: f.Event, Data: f.Data}
	}
	return out, nil
}

// emit numbers a frame, journals it and then publishes it. A journal failure is logged
// and the frame still reaches the window (the settled transcript is what must not be
// lost; the journal only serves replay).
func (r *Runner) emit(rn *run, event string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		r.log.Error("frame not encodable", "event", event, "err", err)
		return
	}
	r.emitRaw(rn, event, raw)
}

func (r *Runner) emitRaw(rn *run, event string, raw json.RawMessage) {
	if r.Redact != nil {
		raw = r.Redact(raw)
	}
	rn.emitMu.Lock()
	defer rn.emitMu.Unlock()
	if rn.ended {
		r.log.Warn("frame after stream_end dropped", "stream", rn.streamID, "event", event)
		return
	}
	if event == protocol.EvStreamEnd {
		rn.ended = true
	}
	rn.seq++
	f := Frame{SessionID: rn.sessionID, StreamID: rn.streamID, Seq: rn.seq, Event: event, Data: raw}
	jf := store.JournalFrame{StreamID: f.StreamID, SessionID: f.SessionID, Seq: f.Seq, Event: f.Event, Data: f.Data,
		CreatedAt: time.Now().UnixMilli()}
	if len(rn.backlog) > 0 {
		// Frames are journaled in order: behind the ones still waiting.
		rn.backlog = append(rn.backlog, jf)
	} else if err := r.store.AppendJournal(context.Background(), jf); err != nil {
		if errors.Is(err, store.ErrLocked) || errors.Is(err, store.ErrDiskFull) || errors.Is(err, store.ErrReadOnly) {
			r.log.Warn("journal write failed; keeping the frames to write later", "stream", rn.streamID, "seq", f.Seq, "err", err)
			rn.backlog = append(rn.backlog, jf)
			r.retryJournal(rn)
		} else {
			r.log.Error("journal write failed", "stream", rn.streamID, "seq", f.Seq, "err", err)
		}
	}
	r.bus.Publish(bus.Event{Name: bus.EventFrame, Payload: f})
}

// Journal retries: frames a locked or full database refused are kept in order and
// written as soon as it takes them again.
const (
	JournalRetryEvery = 250 * time.Millisecond
	JournalRetryFor   = 10 * time.Minute
)

func (r *Runner) isClosing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closing
}

// retryJournal writes the run's journal backlog in the background until it is empty.
// rn.emitMu must be held.
func (r *Runner) retryJournal(rn *run) {
	if rn.journalRetrying {
		return
	}
	rn.journalRetrying = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		deadline := time.Now().Add(JournalRetryFor)
		for {
			time.Sleep(JournalRetryEvery)
			rn.emitMu.Lock()
			batch := append([]store.JournalFrame(nil), rn.backlog...)
			rn.emitMu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := r.store.AppendJournalBatch(ctx, batch)
			cancel()
			rn.emitMu.Lock()
			switch {
			case err == nil || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound):
				if err != nil {
					r.log.Warn("journal backlog dropped", "stream", rn.streamID, "frames", len(batch), "err", err)
				}
				rn.backlog = rn.backlog[len(batch):]
				if len(rn.backlog) == 0 {
					rn.journalRetrying = false
					rn.emitMu.Unlock()
					r.log.Info("journal backlog written", "stream", rn.streamID, "frames", len(batch))
					return
				}
			case time.Now().After(deadline) || r.isClosing():
				r.log.Error("giving up writing the journal backlog; a window that reloads misses these frames", "stream", rn.streamID, "frames", len(rn.backlog), "err", err)
				rn.backlog, rn.journalRetrying = nil, false
				rn.emitMu.Unlock()
				return
			}
			rn.emitMu.Unlock()
		}
	}()
}

// execute runs chat.start and settles the turn.
func (r *Runner) execute(ctx context.Context, rn *run, params protocol.ChatStartParams) {
	defer r.wg.Done()
	defer close(rn.done)
	defer rn.cancel()

	q := newFrameQueue()
	processed := make(chan struct{})
	go func() {
		defer close(processed)
		r.process(rn, q)
	}()

	r.compactBeforeTurn(ctx, rn, &params)
	var res protocol.ChatResult
	err := rn.caller(r).Call(ctx, protocol.MethodChatStart, params, q.push, &res)
	q.close()
	<-processed
	if err == nil && res.AgentSessionID != "" {
		r.noteAgentSession(rn, res.AgentSessionID)
	}

	r.settle(rn, res, err)
}

// caller is the sidecar the run's calls go to: its runtime's, else the Runner's own.
func (rn *run) caller(r *Runner) Caller {
	if rn.cfg.Caller != nil {
		return rn.cfg.Caller
	}
	return r.caller
}

// CallerOf returns the sidecar the live turn of sessionID runs on, nil when none runs:
// answers to the turn's cards must reach the process that asked.
func (r *Runner) CallerOf(sessionID string) Caller {
	r.mu.Lock()
	rn := r.runOfLocked(sessionID)
	r.mu.Unlock()
	if rn == nil {
		return nil
	}
	return rn.caller(r)
}

// noteAgentSession stores the runtime's own session id on the session (only while the
// session is still on the run's runtime), so the next turn, also after a crash or a
// restart, resumes it.
func (r *Runner) noteAgentSession(rn *run, id string) {
	if id == "" || id == rn.agentSession {
		return
	}
	rn.agentSession = id
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.store.SetAgentSession(ctx, rn.sessionID, rn.cfg.Runtime, id); err != nil {
		r.log.Warn("saving the agent's session id", "session", rn.sessionID, "err", err)
	}
}
