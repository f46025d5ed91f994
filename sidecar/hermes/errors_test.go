package hermes_test

import (
	"strings"
	"testing"

	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestProviderErrorsThroughRealHermes: the model's provider failing reaches the turn as
// our condition, in Hermes's own words, from each real Hermes (its retries included:
// every request of the turn fails the same way).
func TestProviderErrorsThroughRealHermes(t *testing.T) {
	t.Parallel()
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			// One Hermes-level attempt (the default 3 retries a refused key for ~30 s).
			r := newRig(t, in, map[string]any{"agent": map[string]any{"api_max_retries": 1}})
			for i, c := range []struct {
				name   string
				turn   providertest.Turn
				cond   string
				inText string
			}{
				{"a refused key", providertest.ErrorTurn(401, "Incorrect API key provided: sk-scr***ted."), protocol.CondCredentialMissing, "API key"},
				{"an unknown model", providertest.ErrorTurn(404, "The model `scripted-model` does not exist or you do not have access to it."), protocol.CondModelNotFound, "does not exist"},
			} {
				t.Run(c.name, func(t *testing.T) {
					turns := make([]providertest.Turn, 12)
					for j := range turns {
						turns[j] = c.turn
					}
					r.provider.Reset()
					r.provider.Enqueue(turns...)
					id, ch := r.start("chat.start", r.chatParams("s-err-"+c.name, "st_err_"+string(rune('a'+i)), "hello"))
					env := waitReply(t, ch)
					if env.Error == nil {
						t.Fatalf("the turn succeeded: %s\nframes:\n%s", env.Result, r.describe(id))
					}
					pe := env.Error
					t.Logf("%s: %s (%s)", c.name, pe.Message, pe.Condition())
					if pe.Condition() != c.cond || !strings.Contains(pe.Message, c.inText) {
						t.Errorf("error %s %q, want %s with %q", pe.Condition(), pe.Message, c.cond, c.inText)
					}
				})
			}
		})
	}
}
