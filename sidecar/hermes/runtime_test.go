package hermes_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestRuntimeAgainstRealHermes drives each real Hermes through the runtime: hello,
// one streamed turn with reasoning, an approval, and a resumed session.
func TestRuntimeAgainstRealHermes(t *testing.T) {
	t.Parallel()
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, in, nil)
			if r.hello.Runtime != "hermes" || r.hello.AgentVersion != in.Version || r.hello.Dialect != in.Dialect {
				t.Fatalf("hello: %+v (want version %s dialect %s)", r.hello, in.Version, in.Dialect)
			}
			if !slices.Contains(r.hello.Capabilities, "chat.steer") || !slices.Contains(r.hello.Features, protocol.FeatureAgentTitle) {
				t.Errorf("capabilities %v features %v", r.hello.Capabilities, r.hello.Features)
			}

			r.provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Reasoning: "Thinking it over. "}, {Text: "Hello "}, {Text: "there!"}},
				Usage: &providertest.Usage{PromptTokens: 120, CompletionTokens: 9}})
			id, ch := r.start("chat.start", r.chatParams("s1", "st_1", "hi"))
			res := resultOf(t, waitReply(t, ch))
			if res.Status != "completed" || res.FinalResponse != "Hello there!" {
				t.Fatalf("result %+v\nframes:\n%s", res, r.describe(id))
			}
			if res.AgentSessionID == "" || res.Usage.InputTokens != 120 || res.Usage.OutputTokens != 9 {
				t.Errorf("agent session %q usage %+v", res.AgentSessionID, res.Usage)
			}
			var tokens, reasoning strings.Builder
			gotSession := false
			for _, f := range r.framesOf(id) {
				var d protocol.TextData
				json.Unmarshal(f.Data, &d) //nolint:errcheck
				switch f.Event {
				case "token":
					tokens.WriteString(d.Text)
				case "reasoning":
					reasoning.WriteString(d.Text)
				case "agent_session":
					gotSession = true
				}
			}
			if tokens.String() != "Hello there!" || reasoning.String() != "Thinking it over. " || !gotSession {
				t.Errorf("tokens %q reasoning %q agent_session %v", tokens.String(), reasoning.String(), gotSession)
			}

			// An approval, allowed once.
			r.provider.Enqueue(providertest.CallTurn("Removing it.", providertest.Call("c1", "terminal",
				map[string]any{"command": "mkdir -p junk && rm -rf junk && echo removed"})), providertest.TextTurn("Removed."))
			id2, ch2 := r.start("chat.start", r.chatParams("s1", "st_2", "remove junk"))
			ad := r.awaitFrame(id2, "approval", nil)
			var ap protocol.ApprovalData
			json.Unmarshal(ad, &ap) //nolint:errcheck
			if !slices.Equal(ap.Choices, []string{"once", "session", "always", "deny"}) || !strings.Contains(ap.Command, "rm -rf junk") {
				t.Errorf("approval %+v", ap)
			}
			var ok protocol.OKResult
			if err := r.call("approval.respond", protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap.ApprovalID, Choice: "once"}, &ok); err != nil || !ok.OK {
				t.Fatalf("approval.respond: %v %+v", err, ok)
			}
			res2 := resultOf(t, waitReply(t, ch2))
			if res2.FinalResponse != "Removed." || res2.AgentSessionID != res.AgentSessionID {
				t.Fatalf("result %+v\nframes:\n%s", res2, r.describe(id2))
			}
			tc := r.frameOf(id2, "tool_complete")
			if !strings.Contains(string(tc), "removed") {
				t.Errorf("tool_complete %s", tc)
			}
			// The provider saw the first exchange in the second turn's request: Hermes
			// kept the conversation.
			reqs := r.provider.Requests()
			last := reqs[len(reqs)-1]
			if !strings.Contains(string(last.Body), "Hello there!") {
				t.Errorf("the second turn's request lacks the first answer: %s", last.Body)
			}

			// Hermes compresses the conversation when asked (its own /compress).
			var cr protocol.CompactResult
			if err := r.call("chat.compact", protocol.CompactParams{SessionID: "s1", AgentSessionID: res.AgentSessionID}, &cr); err != nil {
				t.Fatalf("chat.compact: %v", err)
			}
			t.Logf("chat.compact: %+v", cr)
			if !cr.OK || !strings.Contains(cr.Message, "Hermes") {
				t.Errorf("chat.compact: %+v", cr)
			}
		})
	}
}
