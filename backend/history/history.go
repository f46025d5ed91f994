// Package history brings existing conversations into Talaria's store: the user's own
// Hermes sessions (through the Hermes runtime's agent.history, both gateway dialects)
// and a folder of Talaria web's session files (sessions/<sid>.json beside
// sessions/_index.json). docs/import.md is the user's guide.
//
// Every imported conversation becomes one chat written in one transaction
// (store.ImportChat): a conversation that fails leaves nothing, the others are
// imported. Imports are idempotent by a stable source key recorded with the chat
// ("hermes:<runtime id>:<Hermes session id>", "web:<session id>"), and a Hermes session
// already bound to a chat ("Continue here") is not imported again. One import runs at a
// time; it reports its progress on the bus (EventProgress, a Progress) after every
// conversation and ends when its context does (Cancel).
package history

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// EventProgress is the bus event (and window event) an import publishes after each
// conversation and when it ends; its payload is a Progress.
const EventProgress = "import_progress"

// Import kinds.
const (
	KindHermes = "hermes" // the user's own Hermes sessions of one profile
	KindWeb    = "web"    // a folder of Talaria web session files
)

// Import states.
const (
	StateRunning   = "running"
	StateDone      = "done"      // every item was tried (some may have failed or been skipped)
	StateCancelled = "cancelled" // Cancel stopped it between two conversations
	StateFailed    = "failed"    // the import could not start or go on (Error says why)
)

// MaxProblems is how many Problems a Progress keeps (the counts go on past it).
const MaxProblems = 500

// Progress is an import's state. Imported + Skipped + Failed counts the conversations
// done so far, of Total (0 until the list is known).
type Progress struct {
	JobID    string `json:"job_id"`
	Kind     string `json:"kind"`
	Source   string `json:"source"` // the Hermes runtime id, or the folder
	State    string `json:"state"`
	Total    int    `json:"total"`
	Imported int    `json:"imported"`
	Skipped  int    `json:"skipped"` // already in Talaria, a duplicate, or deleted at the source
	Failed   int    `json:"failed"`  // damaged or refused: nothing of it was written
	// Current names the conversation being imported ("" between two).
	Current string `json:"current"`
	// Problems say what happened to each skipped or failed conversation (at most
	// MaxProblems).
	Problems []Problem `json:"problems"`
	// SessionIDs are the chats this import made, in order.
	SessionIDs []string `json:"session_ids"`
	// CancelRequested is set by Cancel while the import finishes the chat it is
	// writing.
	CancelRequested bool `json:"cancel_requested"`
	// Error and Hint say why a failed import stopped (State failed).
	Error     string `json:"error,omitempty"`
	Hint      string `json:"hint,omitempty"`
	StartedAt int64  `json:"started_at"`         // epoch ms
	EndedAt   int64  `json:"ended_at,omitempty"` // epoch ms; 0 while running
}

// Problem is what happened to one conversation that was not imported.
type Problem struct {
	// Item names it: a file name, or a Hermes session id and title.
	Item string `json:"item"`
	// Outcome is "skipped" (nothing was wrong with it) or "failed".
	Outcome string `json:"outcome"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// HermesSource reads the user's Hermes sessions (backend.Service does).
type HermesSource interface {
	// HermesSessions lists runtime's Hermes sessions, most recent first.
	HermesSessions(ctx context.Context, runtimeID string) ([]backend.HermesSession, error)
	// HermesHistory reads one session's transcript.
	HermesHistory(ctx context.Context, runtimeID, agentSessionID string) (protocol.AgentHistoryResult, error)
}

// ErrRunning is returned by a Start while another import runs. errors.Is
// store.ErrConflict holds.
var ErrRunning = fmt.Errorf("an import is already running: wait for it to end or cancel it, then start this one: %w", store.ErrConflict)

// Importer runs imports into a store, one at a time. Its methods are safe for
// concurrent use.
type Importer struct {
	store  *store.Store
	bus    *bus.Bus
	hermes HermesSource

	mu     sync.Mutex
	last   Progress           // the running or last import
	cancel context.CancelFunc // of the running import; nil when none runs
	done   chan struct{}      // closed when the running import ends
}

// New returns an Importer writing to st and publishing on b; hermes may be nil (then
// Hermes imports fail with a clear error).
func New(st *store.Store, b *bus.Bus, hermes HermesSource) *Importer {
	return &Importer{store: st, bus: b, hermes: hermes}
}

// HermesRequest asks for Hermes sessions of one profile: the ones named, or All.
type HermesRequest struct {
	// RuntimeID is the Hermes runtime ("hermes" = the default profile, "hermes:<name>").
	RuntimeID string `json:"runtime_id"`
	// SessionIDs are the Hermes session ids to import (ignored with All).
	SessionIDs []string `json:"session_ids"`
	// All imports every session of the profile that Hermes lists.
	All bool `json:"all"`
}

// WebRequest asks for a Talaria web folder: the data folder holding sessions/, or the
// sessions folder itself.
type WebRequest struct {
	Folder string `json:"folder"`
}

// StartHermes starts importing Hermes sessions in the background and returns the
// first Progress. Errors: ErrRunning; store.ErrInvalid (wrapped) for an empty request.
func (im *Importer) StartHermes(req HermesRequest) (Progress, error) {
	if !req.All && len(req.SessionIDs) == 0 {
		return Progress{}, fmt.Errorf("choose the Hermes sessions to import, or import all of the profile: %w", store.ErrInvalid)
	}
	return im.start(KindHermes, canonicalHermes(req.RuntimeID), func(ctx context.Context, r *run) { im.runHermes(ctx, r, req) })
}

// StartWeb starts importing a Talaria web folder in the background and returns the
// first Progress. Errors: ErrRunning; store.ErrInvalid (wrapped) for an empty folder
// name.
func (im *Importer) StartWeb(req WebRequest) (Progress, error) {
	if req.Folder == "" {
		return Progress{}, fmt.Errorf("choose the Talaria web folder to import: %w", store.ErrInvalid)
	}
	return im.start(KindWeb, req.Folder, func(ctx context.Context, r *run) { im.runWeb(ctx, r, req) })
}

// RunHermes imports Hermes sessions now, in the caller's goroutine, and returns the
// final Progress (State done; cancelled when ctx ended first; failed). It publishes
// progress like StartHermes. Errors: as StartHermes.
func (im *Importer) RunHermes(ctx context.Context, req HermesRequest) (Progress, error) {
	if !req.All && len(req.SessionIDs) == 0 {
		return Progress{}, fmt.Errorf("choose the Hermes sessions to import, or import all of the profile: %w", store.ErrInvalid)
	}
	return im.runNow(ctx, KindHermes, canonicalHermes(req.RuntimeID), func(ctx context.Context, r *run) { im.runHermes(ctx, r, req) })
}

// RunWeb is RunHermes for a Talaria web folder. Errors: as StartWeb.
func (im *Importer) RunWeb(ctx context.Context, req WebRequest) (Progress, error) {
	if req.Folder == "" {
		return Progress{}, fmt.Errorf("choose the Talaria web folder to import: %w", store.ErrInvalid)
	}
	return im.runNow(ctx, KindWeb, req.Folder, func(ctx context.Context, r *run) { im.runWeb(ctx, r, req) })
}

func (im *Importer) runNow(ctx context.Context, kind, source string, body func(context.Context, *run)) (Progress, error) {
	im.mu.Lock()
	_, err := im.startLocked(ctx, kind, source, body)
	done := im.done
	im.mu.Unlock()
	if err != nil {
		return Progress{}, err
	}
	<-done
	return im.Status(), nil
}

// Cancel stops the running import whose id is jobID ("" = whichever runs) after the
// conversation it is writing (which is written whole or not at all) and returns its
// Progress and true; false when no such import runs (it may have ended).
func (im *Importer) Cancel(jobID string) (Progress, bool) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.cancel == nil || (jobID != "" && jobID != im.last.JobID) {
		return clone(im.last), false
	}
	im.cancel()
	im.last.CancelRequested = true
	return clone(im.last), true
}

// Close cancels the running import, if any, and waits until it has ended (the chat it
// was writing committed or rolled back) or ctx ends: call it before the store closes.
func (im *Importer) Close(ctx context.Context) {
	im.Cancel("")
	im.Wait(ctx)
}

// Status returns the running import's Progress, or the last one's (zero when none ran).
func (im *Importer) Status() Progress {
	im.mu.Lock()
	defer im.mu.Unlock()
	return clone(im.last)
}

// Wait waits until no import runs (or ctx ends) and returns the last Progress.
func (im *Importer) Wait(ctx context.Context) Progress {
	im.mu.Lock()
	done := im.done
	im.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	return im.Status()
}

func (im *Importer) start(kind, source string, body func(context.Context, *run)) (Progress, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.startLocked(context.Background(), kind, source, body)
}

// startLocked starts body in its own goroutine under a context that ends with parent
// or Cancel; im.mu is held.
func (im *Importer) startLocked(parent context.Context, kind, source string, body func(context.Context, *run)) (Progress, error) {
	if im.cancel != nil {
		return clone(im.last), ErrRunning
	}
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	im.cancel, im.done = cancel, done
	im.last = Progress{JobID: newJobID(), Kind: kind, Source: source, State: StateRunning, Problems: []Problem{},
		SessionIDs: []string{}, StartedAt: time.Now().UnixMilli()}
	r := &run{im: im}
	first := clone(im.last)
	go func() {
		defer close(done)
		defer cancel()
		body(ctx, r)
		r.finish(ctx)
	}()
	return first, nil
}

// run is one running import's handle on the shared Progress.
type run struct {
	im *Importer
}

// update changes the Progress under the lock and publishes it.
func (r *run) update(fn func(p *Progress)) {
	r.im.mu.Lock()
	fn(&r.im.last)
	p := clone(r.im.last)
	r.im.mu.Unlock()
	r.im.bus.Publish(bus.Event{Name: EventProgress, Payload: p})
}

func (r *run) total(n int) { r.update(func(p *Progress) { p.Total = n }) }

func (r *run) current(item string) { r.update(func(p *Progress) { p.Current = item }) }

func (r *run) imported(sessionID string) {
	r.update(func(p *Progress) {
		p.Imported++
		p.Current = ""
		p.SessionIDs = append(p.SessionIDs, sessionID)
	})
	r.im.bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
}

func (r *run) skipped(item, message string) {
	r.update(func(p *Progress) {
		p.Skipped++
		p.Current = ""
		addProblem(p, Problem{Item: item, Outcome: "skipped", Message: message})
	})
}

// failed counts item as failed with err's message and hint (backend.ErrorOf; the
// agent's own hint for a sidecar error without one).
func (r *run) failed(item string, err error) {
	u := backend.ErrorOf(err)
	hint := u.Hint
	var pe *protocol.Error
	if hint == "" && errors.As(err, &pe) && pe.Data != nil {
		hint = pe.Data.Hint
	}
	r.update(func(p *Progress) {
		p.Failed++
		p.Current = ""
		addProblem(p, Problem{Item: item, Outcome: "failed", Message: u.Message, Hint: hint})
	})
}

// fail ends the import as failed (nothing more is tried).
func (r *run) fail(err error) {
	u := backend.ErrorOf(err)
	r.update(func(p *Progress) { p.State, p.Error, p.Hint = StateFailed, u.Message, u.Hint })
}

// finish settles the state (unless fail did) and frees the importer.
func (r *run) finish(ctx context.Context) {
	r.im.mu.Lock()
	p := &r.im.last
	if p.State == StateRunning {
		p.State = StateDone
		if ctx.Err() != nil {
			p.State = StateCancelled
		}
	}
	p.Current = ""
	p.EndedAt = time.Now().UnixMilli()
	out := clone(*p)
	r.im.cancel = nil
	r.im.mu.Unlock()
	r.im.bus.Publish(bus.Event{Name: EventProgress, Payload: out})
}

func addProblem(p *Progress, pr Problem) {
	if len(p.Problems) < MaxProblems {
		p.Problems = append(p.Problems, pr)
	}
}

func clone(p Progress) Progress {
	p.Problems = append([]Problem{}, p.Problems...)
	p.SessionIDs = append([]string{}, p.SessionIDs...)
	return p
}

func newJobID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "import-" + hex.EncodeToString(b[:])
}

// cancelled reports whether err is ctx's own end (the import was cancelled, not the
// conversation faulty).
func cancelled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
