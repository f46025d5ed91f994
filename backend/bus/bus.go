// Package bus is the backend's event bus: the turn runner, the supervisor and the
// session services publish; the window bridge (app/) and the tray subscribe.
package bus

import (
	"encoding/json"
	"sync"
)

// Event names published on the bus. Frame events carry a Frame; the others carry the
// payload named beside them.
const (
	EventFrame           = "frame"            // Frame
	EventSessionsChanged = "sessions_changed" // nil
	EventSidecarStatus   = "sidecar_status"   // supervisor.Status
	EventBackgroundTasks = "background_tasks" // tasks.Update: {parent_session_id, tasks}
	EventOpenSession     = "open_session"     // OpenSessionData: the window should show this session
	EventAgentState      = "agent_state"      // AgentStateData: an agent chat's state changed between turns
)

// AgentStateData is the payload of agent_state: the state (protocol.AgentState's JSON:
// modes, models, options, slash commands) an ACP agent gave a chat's session outside
// any turn, such as the commands OpenCode tells just after its first answer.
type AgentStateData struct {
	SessionID string          `json:"session_id"`
	State     json.RawMessage `json:"state" ts:"AgentState"`
}

// OpenSessionData is the payload of open_session (the tray and the self-test ask the
// window to show a session).
type OpenSessionData struct {
	SessionID string `json:"session_id"`
}

// Event is one published event.
type Event struct {
	Name    string
	Payload any
}

// Bus fans events out to subscribers synchronously, in publish order. A subscriber must
// return quickly (hand off to its own goroutine when it does I/O).
type Bus struct {
	mu   sync.RWMutex
	next int
	subs map[int]func(Event)
}

// New returns an empty bus.
func New() *Bus { return &Bus{subs: map[int]func(Event){}} }

// Subscribe registers fn and returns a function that removes it.
func (b *Bus) Subscribe(fn func(Event)) (unsubscribe func()) {
	b.mu.Lock()
	id := b.next
	b.next++
	b.subs[id] = fn
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
}

// Subscribers returns how many subscribers are registered (for tests that check none
// is left behind).
func (b *Bus) Subscribers() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.subs)
}

// Publish delivers ev to every subscriber before it returns.
func (b *Bus) Publish(ev Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, fn := range b.subs {
		fn(ev)
	}
}
