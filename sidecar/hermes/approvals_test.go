package hermes_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestApprovalChoicesAreHermessOwn: when Hermes's smart approvals judge a command
// dangerous (its auxiliary model answers DENY), Hermes still lets its owner run it, once
// and without a lasting rule; the card offers exactly that (no "always"), and the
// answer given runs or keeps the command as Hermes decides.
func TestApprovalChoicesAreHermessOwn(t *testing.T) {
	t.Parallel()
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, in, map[string]any{"approvals": map[string]any{"mode": "smart", "timeout": 60}})
			r.provider.SplitAux(true)
			r.provider.EnqueueAux(providertest.TextTurn("DENY"))
			marker := filepath.Join(r.ws, "keep-me")
			if err := os.MkdirAll(marker, 0o755); err != nil {
				t.Fatal(err)
			}
			r.provider.Enqueue(providertest.CallTurn("", providertest.Call("c1", "terminal", map[string]any{"command": "rm -rf " + marker})),
				providertest.TextTurn("Left it."))
			id, ch := r.start("chat.start", r.chatParams("s1", "st_smart", "remove that folder"))
			var ap protocol.ApprovalData
			json.Unmarshal(r.awaitFrame(id, "approval", nil), &ap) //nolint:errcheck
			t.Logf("choices after Hermes's smart DENY: %v", ap.Choices)
			if slices.Contains(ap.Choices, protocol.ChoiceAlways) || !slices.Contains(ap.Choices, protocol.ChoiceOnce) || !slices.Contains(ap.Choices, protocol.ChoiceDeny) {
				t.Errorf("choices %v: want once and deny, never always", ap.Choices)
			}
			var ok protocol.OKResult
			if err := r.call("approval.respond", protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap.ApprovalID, Choice: protocol.ChoiceDeny}, &ok); err != nil || !ok.OK {
				t.Fatalf("approval.respond: %v %+v", err, ok)
			}
			if res := resultOf(t, waitReply(t, ch)); res.FinalResponse != "Left it." {
				t.Fatalf("result %+v\nframes:\n%s", res, r.describe(id))
			}
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("the denied command ran: %v", err)
			}
		})
	}
}
