package acp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// Modes whose own words say the agent acts without asking are marked so in the chat's
// state before anything happened: Hermes 0.19.0's modes, as its session/new answers
// them (testdata/hermes-0.19.0-tools.acp), and the usual names of other agents'.
func TestModesThatSayTheyDoNotAskAreMarked(t *testing.T) {
	var modes sdk.SessionModeState
	if err := json.Unmarshal([]byte(`{"currentModeId":"default","availableModes":[`+
		`{"description":"Ask before edits.","id":"default","name":"Default"},`+
		`{"description":"Auto-allow workspace and /tmp edits; still asks for sensitive paths.","id":"accept_edits","name":"Accept Edits"},`+
		`{"description":"Auto-allow file edits for this session except sensitive paths.","id":"dont_ask","name":"Don't Ask"},`+
		`{"id":"bypassPermissions","name":"Bypass Permissions"},`+
		`{"id":"plan","name":"plan","description":"Plan mode. Disallows all edit tools."},`+
		`{"id":"build","name":"build","description":"The default agent. Executes tools based on configured permissions."}]}`), &modes); err != nil {
		t.Fatal(err)
	}
	r := New(Options{Agent: Command{Path: "agent"}})
	r.mu.Lock()
	c := r.chatLocked("s1")
	c.applyModesLocked(&modes, nil)
	st := c.stateLocked()
	r.mu.Unlock()
	got := map[string]string{}
	for _, ch := range st.Modes.Choices {
		got[ch.ID] = ch.SelfApproves
	}
	for _, id := range []string{"accept_edits", "dont_ask", "bypassPermissions"} {
		if got[id] == "" {
			t.Errorf("mode %s not marked: %v", id, got)
		}
	}
	for _, id := range []string{"default", "plan", "build"} {
		if got[id] != "" {
			t.Errorf("mode %s marked: %q", id, got[id])
		}
	}
	if st.SelfApproves != "" {
		t.Errorf("current mode default: self_approves = %q", st.SelfApproves)
	}
	if !strings.Contains(got["dont_ask"], "Auto-allow file edits") {
		t.Errorf("dont_ask's reason = %q, want its description quoted", got["dont_ask"])
	}

	// In a marked mode the state says so; a mode seen acting without asking too.
	r.mu.Lock()
	c.modes.Current = "dont_ask"
	if st = c.stateLocked(); st.SelfApproves != got["dont_ask"] {
		t.Errorf("in dont_ask: self_approves = %q", st.SelfApproves)
	}
	c.modes.Current = "build"
	r.selfModes["build"] = "OpenCode edited notes.txt without asking in this mode"
	st = c.stateLocked()
	r.mu.Unlock()
	if st.SelfApproves != "OpenCode edited notes.txt without asking in this mode" {
		t.Errorf("in build after an unasked edit: self_approves = %q", st.SelfApproves)
	}
}
