package turn

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// SteerInfo is a queued steer as the window shows it. CreatedAt is epoch ms.
type SteerInfo struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	CreatedAt int64  `json:"created_at"`
}

// steerState is a run's host-side steer queue; guarded by Runner.mu.
type steerState struct {
	queue     []SteerInfo     // not taken, not withdrawn; oldest first
	accepted  map[string]bool // chat.steer answered accepted
	consumed  []SteerInfo     // taken by the agent, in order
	calls     int             // chat.steer calls in flight
	callsDone chan struct{}   // closed when calls drops to 0 while settling
}

// Where a steer went (SteerOutcome.Delivery).
const (
	DeliveryQueued = "queued" // into the running turn
	DeliveryTurn   = "turn"   // no turn ran: it started one
)

// SteerOutcome says where a steer went: Delivery "queued" (into the running turn
// StreamID) or "turn" (no turn was running, so it started one: StreamID).
type SteerOutcome struct {
	SteerID  string `json:"steer_id"`
	StreamID string `json:"stream_id"`
	Delivery string `json:"delivery" ts:"SteerDelivery"`
	// UserMessage is the saved user row when Delivery is "turn".
	UserMessage *store.Message `json:"user_message,omitempty"`
}

// ErrSteerNotYetQueued is returned by SteerNow for a steer the agent has not
// acknowledged yet: try again in a moment.
var ErrSteerNotYetQueued = errors.New("this message is still on its way to the agent; try Send now again in a moment")

// ErrSteerTaken is returned when a steer can no longer be withdrawn because the agent
// already read it.
var ErrSteerTaken = errors.New("the agent already read this message; it cannot be withdrawn")

// ErrNoSuchSteer is returned for a steer id that is not queued (sent, withdrawn or
// unknown).
var ErrNoSuchSteer = errors.New("this queued message is no longer pending")

func (r *Runner) runOfLocked(sessionID string) *run {
	for _, rn := range r.live {
		if rn.sessionID == sessionID {
			return rn
		}
	}
	return nil
}

// Steer queues text for the turn running in sessionID: the agent reads it as a user
// message at its next model call. When no turn runs, it starts one with text (and
// clears a stop hold, as any message the user sends does). Errors: ErrEmptyMessage,
// *MessageTooLongError (over MaxMessageBytes) and StartTurn's errors.
func (r *Runner) Steer(ctx context.Context, sessionID, text string) (SteerOutcome, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return SteerOutcome{}, ErrEmptyMessage
	}
	// The same limit as a turn's message: a steer is sent to the agent, and saved as a
	// user row, too.
	if len(text) > MaxMessageBytes {
		return SteerOutcome{}, &MessageTooLongError{Bytes: len(text), Limit: MaxMessageBytes}
	}
	for attempt := 0; attempt < 3; attempt++ {
		r.mu.Lock()
		rn := r.runOfLocked(sessionID)
		if rn == nil || rn.settling {
			r.mu.Unlock()
			st, err := r.StartTurn(ctx, sessionID, text)
			var busy *store.BusyError
			if errors.As(err, &busy) {
				time.Sleep(20 * time.Millisecond) // a turn is being admitted or settled: retry
				continue
			}
			if err != nil {
				return SteerOutcome{}, err
			}
			um := st.UserMessage
			return SteerOutcome{StreamID: st.StreamID, Delivery: DeliveryTurn, UserMessage: &um}, nil
		}
		s := SteerInfo{ID: uuid.NewString(), Text: text, CreatedAt: time.Now().UnixMilli()}
		rn.steer.queue = append(rn.steer.queue, s)
		rn.steer.calls++
		r.mu.Unlock()
		r.emitSteerPending(rn)

		var res protocol.SteerResult
		err := rn.caller(r).Call(ctx, protocol.MethodChatSteer, protocol.SteerParams{StreamID: rn.streamID, SteerID: s.ID, Text: text}, nil, &res)
		r.mu.Lock()
		if err == nil && res.Accepted {
			if rn.steer.accepted == nil {
				rn.steer.accepted = map[string]bool{}
			}
			rn.steer.accepted[s.ID] = true
		} else if err != nil {
			r.log.Warn("steer not delivered; it will follow the turn", "stream", rn.streamID, "err", err)
		}
		rn.steer.calls--
		if rn.steer.calls == 0 && rn.steer.callsDone != nil {
			close(rn.steer.callsDone)
			rn.steer.callsDone = nil
		}
		r.mu.Unlock()
		return SteerOutcome{SteerID: s.ID, StreamID: rn.streamID, Delivery: DeliveryQueued}, nil
	}
	return SteerOutcome{}, errors.New("the session is busy starting or ending a turn; send again in a moment")
}

// WithdrawSteer takes a queued steer back (Edit and Cancel in the window) and returns
// its text. Errors: ErrSteerTaken when the agent already read it; ErrNoSuchSteer.
func (r *Runner) WithdrawSteer(ctx context.Context, sessionID, steerID string) (string, error) {
	r.mu.Lock()
	rn := r.runOfLocked(sessionID)
	if rn == nil {
		delivered := r.delivered[steerID]
		r.mu.Unlock()
		if delivered {
			return "", ErrSteerTaken
		}
		return "", ErrNoSuchSteer
	}
	i := slices.IndexFunc(rn.steer.queue, func(s SteerInfo) bool { return s.ID == steerID })
	if i < 0 {
		taken := slices.ContainsFunc(rn.steer.consumed, func(s SteerInfo) bool { return s.ID == steerID }) || r.delivered[steerID]
		r.mu.Unlock()
		if taken {
			return "", ErrSteerTaken
		}
		return "", ErrNoSuchSteer
	}
	s := rn.steer.queue[i]
	accepted := rn.steer.accepted[steerID]
	r.mu.Unlock()

	if accepted {
		var res protocol.SteerWithdrawResult
		if err := rn.caller(r).Call(ctx, protocol.MethodChatSteerWithdraw, protocol.SteerRefParams{StreamID: rn.streamID, SteerID: steerID}, nil, &res); err != nil {
			return "", err
		}
		if !res.Withdrawn {
			return "", ErrSteerTaken
		}
	}
	r.mu.Lock()
	i = slices.IndexFunc(rn.steer.queue, func(s SteerInfo) bool { return s.ID == steerID })
	if i < 0 {
		// Taken (frame processed meanwhile) or already withdrawn: never both.
		r.mu.Unlock()
		return "", ErrSteerTaken
	}
	rn.steer.queue = slices.Delete(rn.steer.queue, i, i+1)
	r.mu.Unlock()
	r.emit(rn, protocol.EvSteerWithdrawn, SteerWithdrawnData{ID: steerID})
	r.emitSteerPending(rn)
	return s.Text, nil
}

// SteerNow asks the agent to read a queued steer at once, restarting the in-flight
// model request when the runtime can; otherwise it stays queued for the next call.
func (r *Runner) SteerNow(ctx context.Context, sessionID, steerID string) (protocol.SteerNowResult, error) {
	r.mu.Lock()
	rn := r.runOfLocked(sessionID)
	queued := rn != nil && slices.ContainsFunc(rn.steer.queue, func(s SteerInfo) bool { return s.ID == steerID })
	accepted := queued && rn.steer.accepted[steerID]
	r.mu.Unlock()
	if !queued {
		return protocol.SteerNowResult{}, ErrNoSuchSteer
	}
	if !accepted {
		return protocol.SteerNowResult{}, ErrSteerNotYetQueued
	}
	var res protocol.SteerNowResult
	err := rn.caller(r).Call(ctx, protocol.MethodChatSteerNow, protocol.SteerRefParams{StreamID: rn.streamID, SteerID: steerID}, nil, &res)
	return res, err
}

// PendingSteers returns the steers queued in the session's running turn.
func (r *Runner) PendingSteers(sessionID string) []SteerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rn := r.runOfLocked(sessionID); rn != nil {
		return append([]SteerInfo{}, rn.steer.queue...)
	}
	return []SteerInfo{}
}

// noteSteerPending handles the sidecar's steer_pending frame: taken steers become
// steer_consumed frames (the agent read them here), and the queue is re-announced.
func (r *Runner) noteSteerPending(rn *run, d protocol.SteerPendingData) {
	var taken []SteerInfo
	r.mu.Lock()
	for _, t := range d.Taken {
		i := slices.IndexFunc(rn.steer.queue, func(s SteerInfo) bool { return s.ID == t.SteerID })
		if i < 0 {
			continue
		}
		s := rn.steer.queue[i]
		rn.steer.queue = slices.Delete(rn.steer.queue, i, i+1)
		rn.steer.consumed = append(rn.steer.consumed, s)
		taken = append(taken, s)
	}
	r.mu.Unlock()
	for _, s := range taken {
		r.emit(rn, protocol.EvSteerConsumed, SteerConsumedData{ID: s.ID, Text: s.Text})
	}
	if len(taken) > 0 {
		r.emitSteerPending(rn)
	}
}

// emitSteerPending announces the host's queue. Snapshots are taken and sent in one
// order (steerEmitMu), so a window never ends on a stale queue. Callers must not hold
// r.mu.
func (r *Runner) emitSteerPending(rn *run) {
	rn.steerEmitMu.Lock()
	defer rn.steerEmitMu.Unlock()
	r.mu.Lock()
	q := append([]SteerInfo{}, rn.steer.queue...)
	r.mu.Unlock()
	r.emit(rn, protocol.EvSteerQueue, SteerQueueData{Steers: q})
}

// leftoverSteers closes the queue when the turn ends: it waits for chat.steer calls in
// flight (at most 5 s), then returns the steers the agent never took. With a result,
// a steer the sidecar accepted counts as left over only if the result lists it in
// pending_steer; without one (the sidecar died) every untaken steer is left over.
func (r *Runner) leftoverSteers(rn *run, res *protocol.ChatResult) []SteerInfo {
	r.mu.Lock()
	rn.settling = true
	var wait chan struct{}
	if rn.steer.calls > 0 {
		wait = make(chan struct{})
		rn.steer.callsDone = wait
	}
	r.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-time.After(5 * time.Second):
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Every steer of this run is now delivered: read in the turn, or about to be sent
	// as the follow-up. A late withdraw must say so, not "unknown".
	for _, s := range rn.steer.consumed {
		r.markDeliveredLocked(s.ID)
	}
	for _, s := range rn.steer.queue {
		r.markDeliveredLocked(s.ID)
	}
	var out []SteerInfo
	for _, s := range rn.steer.queue {
		if res != nil && rn.steer.accepted[s.ID] && !slices.ContainsFunc(res.PendingSteer, func(p protocol.SteerItem) bool { return p.SteerID == s.ID }) {
			r.log.Warn("steer accepted, not reported taken, not pending: treating it as read", "stream", rn.streamID, "steer", s.ID)
			continue
		}
		out = append(out, s)
	}
	rn.steer.queue = nil
	return out
}

// followUp sends the steers a finished turn never took, once, as one new turn; when
// another turn already holds the session it steers them into that one instead.
func (r *Runner) followUp(sessionID string, left []SteerInfo) {
	texts := make([]string, len(left))
	for i, s := range left {
		texts[i] = s.Text
	}
	joined := strings.Join(texts, "\n\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if held, err := r.store.StopHold(ctx, sessionID); err != nil || held {
		// The user stopped this session: no automatic turn; keep the text for them.
		r.keepUnsent(sessionID, texts)
		return
	}
	if _, err := r.Steer(ctx, sessionID, joined); err != nil {
		r.log.Error("follow-up turn for queued messages failed", "session", sessionID, "err", err)
	}
}

// maxDelivered bounds the memory of delivered steer ids.
const maxDelivered = 4096

// markDeliveredLocked remembers that steer id reached the agent (r.mu held).
func (r *Runner) markDeliveredLocked(id string) {
	if r.delivered == nil || len(r.delivered) >= maxDelivered {
		r.delivered = map[string]bool{}
	}
	r.delivered[id] = true
}
