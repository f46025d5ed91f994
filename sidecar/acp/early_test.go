package acp

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
)

// commandsUpdate is an available_commands_update of agent session sid naming cmds.
func commandsUpdate(sid string, cmds ...string) sdk.SessionNotification {
	var list []sdk.AvailableCommand
	for _, c := range cmds {
		list = append(list, sdk.AvailableCommand{Name: c, Description: c})
	}
	return sdk.SessionNotification{SessionId: sdk.SessionId(sid),
		Update: sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: list}}}
}

func commandNames(st protocol.AgentState) []string {
	var out []string
	for _, c := range st.Commands {
		out = append(out, c.Name)
	}
	return out
}

// TestStateUpdatesBeforeTheSessionIsBound: the slash commands an agent tells for a
// session before its session/new answer was taken (OpenCode tells them on the next
// tick, on another goroutine of the SDK than the answer's) are kept and applied when
// the session is bound to its chat; another process's are not kept.
func TestStateUpdatesBeforeTheSessionIsBound(t *testing.T) {
	r := New(Options{Agent: Command{Path: "unused"}})
	r.gen = 1
	a := &agentConn{gen: 1}
	cl := &client{r: r, a: a}
	ctx := context.Background()
	if err := cl.SessionUpdate(ctx, commandsUpdate("agent-1", "init", "review")); err != nil {
		t.Fatal(err)
	}
	stale := &client{r: r, a: &agentConn{gen: 0}}
	stale.SessionUpdate(ctx, commandsUpdate("agent-old", "gone")) //nolint:errcheck

	r.mu.Lock()
	c := r.chatLocked("chat-1")
	r.mu.Unlock()
	r.adopt(c, a, "agent-1", "/tmp", func(*chat) {})
	r.mu.Lock()
	got := commandNames(c.stateLocked())
	_, keptStale := r.early["agent-old"]
	left := len(r.early)
	r.mu.Unlock()
	if len(got) != 2 || got[0] != "init" || got[1] != "review" {
		t.Errorf("commands after bind = %v, want [init review]", got)
	}
	if keptStale || left != 0 {
		t.Errorf("early updates left: %d (another process's kept: %v)", left, keptStale)
	}
}

// TestStateOutsideATurnIsASessionEvent: a state change between turns (no turn runs)
// goes to the host as a $/session_event agent_state of the Talaria session.
func TestStateOutsideATurnIsASessionEvent(t *testing.T) {
	r := New(Options{Agent: Command{Path: "unused"}})
	r.gen = 1
	a := &agentConn{gen: 1}
	var mu sync.Mutex
	var events []protocol.SessionEventParams
	r.SetNotify(func(method string, params any) error {
		if method != protocol.MethodSessionEvent {
			t.Errorf("method %q", method)
		}
		mu.Lock()
		events = append(events, params.(protocol.SessionEventParams))
		mu.Unlock()
		return nil
	})
	r.mu.Lock()
	c := r.chatLocked("chat-1")
	r.mu.Unlock()
	r.adopt(c, a, "agent-1", "/tmp", func(*chat) {})
	cl := &client{r: r, a: a}
	if err := cl.SessionUpdate(context.Background(), commandsUpdate("agent-1", "init")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0].SessionID != "chat-1" || events[0].Event != protocol.EvAgentState {
		t.Fatalf("session events = %+v", events)
	}
	b, _ := json.Marshal(events[0].Data)
	var st protocol.AgentState
	json.Unmarshal(b, &st) //nolint:errcheck
	if got := commandNames(st); len(got) != 1 || got[0] != "init" {
		t.Errorf("state sent = %s", b)
	}
}
