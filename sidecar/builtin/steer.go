package builtin

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"talaria/sidecar/protocol"
	"talaria/sidecar/server"
)

// Steering (docs/protocol.md, "Steering"): text the user sends while a turn runs. A
// running chat.start keeps a queue of steers; before each model call (each HTTP
// attempt) the loop takes the whole queue, appends one user message per steer in queue
// order, and sends steer_pending {pending, taken} before any frame of that call. Every
// change of the queue (chat.steer, chat.steer_withdraw, a take) happens under the
// queue's lock together with the steer_pending frame that reports it, so frames report
// the queue in the order it changed, and a steer is either withdrawn or taken, never
// both. chat.steer_now restarts a model call that has produced no tool call yet.

// errRestart is the cause with which chat.steer_now cancels an in-flight model call.
var errRestart = errors.New("the model call was restarted to read a steer")

// steerPhase is where the turn is, as steering sees it.
type steerPhase int

const (
	phaseOther      steerPhase = iota // running tools, waiting to retry, deciding: steers wait for the next call
	phaseModel                        // a model call without a tool call yet: chat.steer_now restarts it
	phaseRestarting                   // chat.steer_now cancelled the call; the next call takes the queue
)

// queuedSteer is one untaken steer.
type queuedSteer struct {
	protocol.SteerItem
	now bool // chat.steer_now asked for it: it is as good as taken and cannot be withdrawn
}

// steerQueue is a turn's steering state. Its lock is taken before Runtime.mu (through
// turn.send's redactor) and never the other way round.
type steerQueue struct {
	mu     sync.Mutex
	queue  []queuedSteer
	seen   map[string]bool // every steer id this turn accepted
	phase  steerPhase
	cancel context.CancelCauseFunc // the model call in flight (phaseModel)
	sealed bool                    // the turn is returning: nothing is accepted, taken or withdrawn
}

func (q *steerQueue) pendingLocked() []protocol.SteerItem {
	out := make([]protocol.SteerItem, 0, len(q.queue))
	for _, s := range q.queue {
		out = append(out, s.SteerItem)
	}
	return out
}

func (q *steerQueue) indexLocked(id string) int {
	return slices.IndexFunc(q.queue, func(s queuedSteer) bool { return s.SteerID == id })
}

// register makes the turn reachable by its stream_id.
func (r *Runtime) register(t *turn) {
	if t.p.StreamID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.streams[t.p.StreamID]; old != nil && old != t {
		t.log.Warn("a chat.start reuses a running stream_id; steers go to the newer one")
	}
	r.streams[t.p.StreamID] = t
}

func (r *Runtime) unregister(t *turn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.streams[t.p.StreamID] == t {
		delete(r.streams, t.p.StreamID)
	}
}

func (r *Runtime) streamTurn(streamID string) *turn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.streams[streamID]
}

// Steer runs chat.steer: it queues a steer for the running turn of p.StreamID. The
// result is {accepted: false} when no turn of that stream runs or it is returning (the
// host then keeps the steer for a follow-up turn). can_redirect is true when, at that
// moment, the turn is in a model call that chat.steer_now could restart. A steer id the
// turn already accepted is accepted again without being queued twice.
func (r *Runtime) Steer(p protocol.SteerParams) (protocol.SteerResult, error) {
	if p.StreamID == "" || p.SteerID == "" {
		return protocol.SteerResult{}, invalid("stream_id and steer_id are required")
	}
	if strings.TrimSpace(p.Text) == "" {
		return protocol.SteerResult{}, invalid("the steer text is empty")
	}
	t := r.streamTurn(p.StreamID)
	if t == nil {
		return protocol.SteerResult{}, nil
	}
	return t.acceptSteer(protocol.SteerItem{SteerID: p.SteerID, Text: p.Text}), nil
}

// SteerWithdraw runs chat.steer_withdraw: {withdrawn: true} when the steer was still
// queued (it is removed and will never be read); false when the turn already took it,
// chat.steer_now claimed it, the turn is returning, or the id is unknown.
func (r *Runtime) SteerWithdraw(p protocol.SteerRefParams) (protocol.SteerWithdrawResult, error) {
	if p.StreamID == "" || p.SteerID == "" {
		return protocol.SteerWithdrawResult{}, invalid("stream_id and steer_id are required")
	}
	t := r.streamTurn(p.StreamID)
	if t == nil {
		return protocol.SteerWithdrawResult{}, nil
	}
	return protocol.SteerWithdrawResult{Withdrawn: t.withdrawSteer(p.SteerID)}, nil
}

// SteerNow runs chat.steer_now for a queued steer. In a model call that has produced
// no tool call yet, the call is abandoned (its text so far kept as a partial assistant
// row) and restarted at once with the queue taken: {withdrawn, redirected, delivery:
// "restart"}. Otherwise (tools running, a retry wait, tool calls streaming) the steer
// stays queued for the next model call: {withdrawn, delivery: "steer", requeued}. An
// unknown, taken or withdrawn steer, or a returning turn: {withdrawn: false}.
func (r *Runtime) SteerNow(p protocol.SteerRefParams) (protocol.SteerNowResult, error) {
	if p.StreamID == "" || p.SteerID == "" {
		return protocol.SteerNowResult{}, invalid("stream_id and steer_id are required")
	}
	t := r.streamTurn(p.StreamID)
	if t == nil {
		return protocol.SteerNowResult{}, nil
	}
	return t.steerNow(p.SteerID), nil
}

func (t *turn) acceptSteer(it protocol.SteerItem) protocol.SteerResult {
	q := &t.steer
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.sealed {
		return protocol.SteerResult{}
	}
	res := protocol.SteerResult{Accepted: true, CanRedirect: q.phase == phaseModel || q.phase == phaseRestarting}
	if q.seen[it.SteerID] {
		return res
	}
	if q.seen == nil {
		q.seen = map[string]bool{}
	}
	q.seen[it.SteerID] = true
	q.queue = append(q.queue, queuedSteer{SteerItem: it})
	t.send(protocol.EvSteerPending, protocol.SteerPendingData{Pending: q.pendingLocked()})
	t.log.Info("steer queued", "steer_id", it.SteerID, "queued", len(q.queue))
	return res
}

func (t *turn) withdrawSteer(id string) bool {
	q := &t.steer
	q.mu.Lock()
	defer q.mu.Unlock()
	i := q.indexLocked(id)
	if q.sealed || i < 0 || q.queue[i].now {
		return false
	}
	q.queue = slices.Delete(q.queue, i, i+1)
	t.send(protocol.EvSteerPending, protocol.SteerPendingData{Pending: q.pendingLocked()})
	t.log.Info("steer withdrawn", "steer_id", id)
	return true
}

func (t *turn) steerNow(id string) protocol.SteerNowResult {
	q := &t.steer
	q.mu.Lock()
	defer q.mu.Unlock()
	i := q.indexLocked(id)
	if q.sealed || i < 0 {
		return protocol.SteerNowResult{}
	}
	switch q.phase {
	case phaseModel:
		q.queue[i].now = true
		q.phase = phaseRestarting
		q.cancel(errRestart)
		q.cancel = nil
		t.log.Info("model call restarted for a steer", "steer_id", id)
		fallthrough
	case phaseRestarting:
		q.queue[i].now = true
		return protocol.SteerNowResult{Withdrawn: true, Redirected: true, Delivery: "restart"}
	}
	return protocol.SteerNowResult{Withdrawn: true, Delivery: "steer", Requeued: true}
}

// beginCall starts a model call (one HTTP attempt): it takes the whole queue, reports
// the take, and makes the call restartable through cancel. The caller appends the
// taken steers as user messages before it sends the request.
func (t *turn) beginCall(cancel context.CancelCauseFunc) []protocol.SteerItem {
	q := &t.steer
	q.mu.Lock()
	defer q.mu.Unlock()
	q.phase, q.cancel = phaseModel, cancel
	if len(q.queue) == 0 {
		return nil
	}
	taken := q.pendingLocked()
	q.queue = nil
	t.send(protocol.EvSteerPending, protocol.SteerPendingData{Pending: []protocol.SteerItem{}, Taken: taken})
	return taken
}

// sawToolCall notes that the model call is producing a tool call: it can no longer be
// restarted. It reports whether chat.steer_now already restarted it.
func (t *turn) sawToolCall() (restarting bool) {
	q := &t.steer
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.phase == phaseModel {
		q.phase, q.cancel = phaseOther, nil
	}
	return q.phase == phaseRestarting
}

// endCall ends a model call; it reports whether chat.steer_now restarted it.
func (t *turn) endCall() (restarted bool) {
	q := &t.steer
	q.mu.Lock()
	defer q.mu.Unlock()
	restarted = q.phase == phaseRestarting
	q.phase, q.cancel = phaseOther, nil
	return restarted
}

// sealSteers ends steering for the turn and returns the steers it never took
// (pending_steer), oldest first; nil when none. Later calls return nil.
func (t *turn) sealSteers() []protocol.SteerItem {
	q := &t.steer
	q.mu.Lock()
	var left []protocol.SteerItem
	if !q.sealed {
		q.sealed = true
		if len(q.queue) > 0 {
			left = q.pendingLocked()
		}
		q.queue = nil
	}
	q.mu.Unlock()
	t.r.unregister(t)
	return left
}

// steerMethods are the method-table entries of the steering methods.
func (r *Runtime) steerMethods() map[string]server.Handler {
	return map[string]server.Handler{
		protocol.MethodChatSteer: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.SteerParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			res, err := r.Steer(p)
			if err == nil {
				// Never the text.
				call.Log.Info("steer", "stream_id", p.StreamID, "steer_id", p.SteerID, "accepted", res.Accepted, "can_redirect", res.CanRedirect)
			}
			return res, err
		},
		protocol.MethodChatSteerWithdraw: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.SteerRefParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			res, err := r.SteerWithdraw(p)
			if err == nil {
				call.Log.Info("steer withdraw", "stream_id", p.StreamID, "steer_id", p.SteerID, "withdrawn", res.Withdrawn)
			}
			return res, err
		},
		protocol.MethodChatSteerNow: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.SteerRefParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			res, err := r.SteerNow(p)
			if err == nil {
				call.Log.Info("steer now", "stream_id", p.StreamID, "steer_id", p.SteerID, "delivery", res.Delivery)
			}
			return res, err
		},
	}
}
