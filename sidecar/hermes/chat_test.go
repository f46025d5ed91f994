package hermes_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestChatFeaturesAgainstRealHermes drives each real Hermes through the chat features
// it has counterparts for: an image attached to a message reaches the model (Hermes
// told to send images natively), the chat's reasoning effort is set on its session,
// and "Summarise and continue" compresses the Hermes session.
func TestChatFeaturesAgainstRealHermes(t *testing.T) {
	t.Parallel()
	img, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			t.Parallel()
			// The scripted model takes images: Hermes sends them as they are (it would
			// describe them with a vision tool for a model it believes has no vision).
			r := newRigWith(t, in, hermestest.Config{Extra: map[string]any{"agent": map[string]any{"image_input_mode": "native"}},
				ModelExtra: map[string]any{"supports_vision": true}})
			for _, f := range []string{protocol.FeatureImages, protocol.FeatureReasoningEffort} {
				if !slices.Contains(r.hello.Features, f) {
					t.Errorf("features %v lack %s", r.hello.Features, f)
				}
			}
			if !slices.Contains(r.hello.Capabilities, protocol.MethodChatCompact) {
				t.Errorf("capabilities %v lack chat.compact", r.hello.Capabilities)
			}

			sum := sha256.Sum256(img)
			path := filepath.Join(t.TempDir(), hex.EncodeToString(sum[:]))
			if err := os.WriteFile(path, img, 0o600); err != nil {
				t.Fatal(err)
			}
			r.provider.Enqueue(providertest.TextTurn("A red dot."))
			p := r.chatParams("s1", "st_1", "what is this?")
			p.UserParts = []protocol.ContentPart{
				{Type: protocol.PartImageFile, ImageFile: &protocol.ImageFile{Path: path, MIMEType: "image/png", Name: "dot.png", SHA256: hex.EncodeToString(sum[:])}},
				protocol.TextPart("what is this?"),
			}
			p.ReasoningEffort = "low"
			id, ch := r.start("chat.start", p)
			res := resultOf(t, waitReply(t, ch))
			if res.Status != "completed" || res.FinalResponse != "A red dot." {
				t.Fatalf("result %+v\nframes:\n%s", res, r.describe(id))
			}
			var chat *providertest.Request
			for _, q := range r.provider.Requests() {
				if q.Stream {
					q := q
					chat = &q
				}
			}
			if chat == nil {
				t.Fatal("Hermes made no chat request")
			}
			body := string(chat.Body)
			if !strings.Contains(body, `"image_url"`) || !strings.Contains(body, base64.StdEncoding.EncodeToString(img)) || !strings.Contains(body, "what is this?") {
				t.Errorf("the model's request lacks the image or the text:\n%.3000s", body)
			}

			var top map[string]json.RawMessage
			_ = json.Unmarshal(chat.Body, &top)
			keys := []string{}
			for k, v := range top {
				if k != "messages" && k != "tools" {
					keys = append(keys, k+"="+string(v))
				}
			}
			t.Logf("request members: %v", keys)
			// Dialect B takes the effort at session.create and sends it to the provider;
			// 0.19 stores it on the session (config.set) but sends no reasoning member to
			// a custom provider.
			if in.Dialect == "B" && string(top["reasoning_effort"]) != `"low"` {
				t.Errorf("the chat's reasoning effort did not reach the model: %v", keys)
			}
			// Two more exchanges, then compress.
			for i, q := range []string{"second", "third"} {
				r.provider.Enqueue(providertest.TextTurn("answer " + q))
				_, ch := r.start("chat.start", r.chatParams("s1", "st_"+q, q+" question"))
				if got := resultOf(t, waitReply(t, ch)); got.FinalResponse != "answer "+q {
					t.Fatalf("turn %d: %+v", i, got)
				}
			}
			r.provider.SplitAux(true)
			r.provider.EnqueueAux(providertest.TextTurn("Summary: a red dot, then two questions."))
			var cr protocol.CompactResult
			if err := r.call(protocol.MethodChatCompact, protocol.CompactParams{SessionID: "s1", AgentSessionID: res.AgentSessionID}, &cr); err != nil {
				t.Fatalf("chat.compact: %v", err)
			}
			if cr.Message == "" {
				t.Errorf("chat.compact = %+v", cr)
			}
			t.Logf("chat.compact: %+v", cr)
		})
	}
}
