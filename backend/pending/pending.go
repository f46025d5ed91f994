// Package pending keeps, per session, the queues of approvals and clarifies that wait
// for the user. The window is shown the head of each queue and its length; an answer
// must name an item that is still waiting, else it fails closed with a *StaleError and
// nothing is sent to the agent. An answer claims its item while it is sent and takes
// it out of the queue only once the agent has it, so an answer that never arrived
// leaves the item answerable.
package pending

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Kinds of items.
const (
	KindApproval = "approval"
	KindClarify  = "clarify" // both plain and vault clarifies
)

// Item is one waiting approval or clarify.
type Item struct {
	Kind        string          `json:"kind"`
	ID          string          `json:"id"` // approval_id or clarify_id
	StreamID    string          `json:"stream_id"`
	ClarifyKind string          `json:"clarify_kind,omitempty"` // clarify or vault
	Pattern     string          `json:"pattern,omitempty"`      // approvals: the dangerous-pattern key
	Description string          `json:"description,omitempty"`  // approvals: why it is dangerous
	Name        string          `json:"name,omitempty"`         // vault: the variable name
	Data        json.RawMessage `json:"data"`                   // the frame data the window shows

	answering bool // claimed by an answer on its way to the agent (Claim)
}

// ErrStale is wrapped by every StaleError.
var ErrStale = errors.New("stale")

// StaleError says an answer named an item that is not waiting (unknown, already
// answered, timed out, or of another kind). Its message starts with "stale:" so the
// window knows to drop the card and re-read the queue.
type StaleError struct{ Kind, ID, Why string }

func (e *StaleError) Error() string {
	return fmt.Sprintf("stale: this %s (%s) is no longer waiting: %s", e.Kind, e.ID, e.Why)
}

// Unwrap makes errors.Is(err, ErrStale) true.
func (e *StaleError) Unwrap() error { return ErrStale }

// Queues holds every session's queues. Safe for concurrent use. A session is kept only
// while something of it waits: once both its queues are empty it is forgotten, so the
// memory held does not grow with every session that ever ran a turn.
type Queues struct {
	mu   sync.Mutex
	sess map[string]*queues // only sessions with at least one waiting item
}

type queues struct{ approvals, clarifies []Item }

// New returns empty queues.
func New() *Queues { return &Queues{sess: map[string]*queues{}} }

// Sessions returns how many sessions have at least one item waiting.
func (q *Queues) Sessions() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.sess)
}

// forget drops sessionID's entry when both its queues are empty. Every method calls it
// (deferred, under mu) after list, which makes the entry it reads or writes.
func (q *Queues) forget(sessionID string) {
	if s := q.sess[sessionID]; s != nil && len(s.approvals) == 0 && len(s.clarifies) == 0 {
		delete(q.sess, sessionID)
	}
}

func (q *Queues) list(sessionID, kind string) *[]Item {
	s := q.sess[sessionID]
	if s == nil {
		s = &queues{}
		q.sess[sessionID] = s
	}
	if kind == KindApproval {
		return &s.approvals
	}
	return &s.clarifies
}

// Add appends it to its session's queue and returns the queue's length.
func (q *Queues) Add(sessionID string, it Item) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.forget(sessionID)
	l := q.list(sessionID, it.Kind)
	*l = append(*l, it)
	return len(*l)
}

// Resolve withdraws item id of kind (the agent settled it) and returns the queue's new
// length and whether it was there.
func (q *Queues) Resolve(sessionID, kind, id string) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.forget(sessionID)
	l := q.list(sessionID, kind)
	for i, it := range *l {
		if it.ID == id {
			*l = append((*l)[:i], (*l)[i+1:]...)
			return len(*l), true
		}
	}
	return len(*l), false
}

// Peek returns item id of kind without removing it; *StaleError when it is not waiting.
func (q *Queues) Peek(sessionID, kind, id string) (Item, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.forget(sessionID)
	for _, it := range *q.list(sessionID, kind) {
		if it.ID == id {
			return it, nil
		}
	}
	return Item{}, &StaleError{Kind: kind, ID: id, Why: "it was answered, timed out, or its turn ended"}
}

// Claim marks item id of kind as being answered and returns it, so that one answer at a
// time is ever sent for it: until Release, another Claim of it fails with *StaleError.
// The item keeps its place in the queue (Head and Peek still return it): the agent
// still waits for it until the answer is delivered. *StaleError when it is not waiting.
func (q *Queues) Claim(sessionID, kind, id string) (Item, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.forget(sessionID)
	l := *q.list(sessionID, kind)
	for i := range l {
		if l[i].ID != id {
			continue
		}
		if l[i].answering {
			return Item{}, &StaleError{Kind: kind, ID: id, Why: "another answer to it is being sent"}
		}
		l[i].answering = true
		return l[i], nil
	}
	return Item{}, &StaleError{Kind: kind, ID: id, Why: "it was answered, timed out, or its turn ended"}
}

// Release ends a Claim. With done (the agent took the answer, or said it no longer
// waits) the item leaves the queue; without (the answer never reached the agent) it
// can be answered again. No-op when the item already left (its resolved frame came
// first, or its turn ended).
func (q *Queues) Release(sessionID, kind, id string, done bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.forget(sessionID)
	l := q.list(sessionID, kind)
	for i := range *l {
		if (*l)[i].ID != id {
			continue
		}
		if done {
			*l = append((*l)[:i], (*l)[i+1:]...)
		} else {
			(*l)[i].answering = false
		}
		return
	}
}

// Head returns the first waiting item of kind (ok false when none) and the queue's
// length.
func (q *Queues) Head(sessionID, kind string) (Item, int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.forget(sessionID)
	l := *q.list(sessionID, kind)
	if len(l) == 0 {
		return Item{}, 0, false
	}
	return l[0], len(l), true
}

// DropStream removes every item of streamID (its turn ended) and returns them.
func (q *Queues) DropStream(sessionID, streamID string) []Item {
	q.mu.Lock()
	defer q.mu.Unlock()
	defer q.forget(sessionID)
	var dropped []Item
	for _, kind := range []string{KindApproval, KindClarify} {
		l := q.list(sessionID, kind)
		kept := (*l)[:0]
		for _, it := range *l {
			if it.StreamID == streamID {
				dropped = append(dropped, it)
			} else {
				kept = append(kept, it)
			}
		}
		*l = kept
	}
	return dropped
}

// DropSession forgets every item of a deleted session.
func (q *Queues) DropSession(sessionID string) {
	q.mu.Lock()
	delete(q.sess, sessionID)
	q.mu.Unlock()
}
