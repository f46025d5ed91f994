package core

import "testing"

func TestAgentKind(t *testing.T) {
	for id, want := range map[string]string{
		"": "builtin", "builtin": "builtin", "hermes": "hermes", "hermes:work": "hermes", "acp:opencode": "acp",
		"ssh:box": "builtin", "ssh:box:hermes": "hermes", "ssh:box:hermes:work": "hermes", "ssh:box:acp:opencode": "acp",
	} {
		if got := AgentKind(id); got != want {
			t.Errorf("AgentKind(%q) = %q, want %q", id, got, want)
		}
	}
}
