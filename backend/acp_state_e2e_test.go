package backend_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/turn"
	"talaria/internal/testwait"
	"talaria/sidecar/acp/acptest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestACPFirstTurnCommandsReachTheWindow: the real Service, sidecar and OpenCode
// 1.18.33 (only the model scripted). A new chat's first turn opens the agent session;
// OpenCode tells its slash commands on the next tick after answering session/new, so
// they may come before the session is bound to its chat, during the turn, or after it
// ended. Whenever they come, the window learns them: in an agent_state frame of the
// turn or in an agent_state event between turns (CI's window test once never saw
// "/init" offered).
func TestACPFirstTurnCommandsReachTheWindow(t *testing.T) {
	t.Parallel() // its own provider, data folder and agent
	p := providertest.Start()
	defer p.Close()
	r := newOpenCodeRig(t, p)

	sid := r.NewSession()
	var mu sync.Mutex
	seen := false
	hasInit := func(raw json.RawMessage) bool {
		var st protocol.AgentState
		if json.Unmarshal(raw, &st) != nil {
			return false
		}
		for _, c := range st.Commands {
			if c.Name == "init" {
				return true
			}
		}
		return false
	}
	stop := r.Svc.Bus.Subscribe(func(ev bus.Event) {
		var raw json.RawMessage
		switch ev.Name {
		case bus.EventFrame:
			if f, ok := ev.Payload.(turn.Frame); ok && f.SessionID == sid && f.Event == protocol.EvAgentState {
				raw = f.Data
			}
		case bus.EventAgentState:
			if d, ok := ev.Payload.(bus.AgentStateData); ok && d.SessionID == sid {
				raw = d.State
			}
		}
		if raw != nil && hasInit(raw) {
			mu.Lock()
			seen = true
			mu.Unlock()
		}
	})
	defer stop()

	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Hello."}}})
	stream := r.Start(sid, "say hello")
	r.CheckFrames(stream, r.waitEndLong(stream), protocol.EvDone)
	testwait.For(t, "OpenCode's /init command offered to the window after the first turn", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen
	})
}

// newOpenCodeRig is the real Service and sidecar with OpenCode as an ACP agent, its
// model (and its auxiliary model, stopped with the test) scripted by p.
func newOpenCodeRig(t *testing.T, p *providertest.Server) *acpRig {
	t.Helper()
	aux := providertest.Start()
	t.Cleanup(aux.Close)
	oc, err := acptest.NewOpenCode(t.TempDir(), p.BaseURL(), aux.BaseURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return newACPRig(t, p, acpAgentSetup{name: "OpenCode", version: acptest.OpenCodeVersion, agent: openCodeAgent(oc)})
}

// openCodeAgent is the Settings entry of the OpenCode oc: its command, arguments and
// environment, after the variables in first (such as a secret API key).
func openCodeAgent(oc *acptest.OpenCode, first ...backend.ACPEnvVar) backend.ACPAgent {
	env := append([]backend.ACPEnvVar(nil), first...)
	for _, kv := range oc.Env {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, backend.ACPEnvVar{Name: k, Value: v})
	}
	return backend.ACPAgent{Name: "OpenCode", Command: oc.Binary, Args: oc.Args(), Env: env, Preset: "opencode"}
}
