package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// pngBytes is a tiny valid PNG (1x1, red) with a byte of every value after it, so a
// wrong encoding anywhere changes the data: URL.
func pngBytes() []byte {
	b, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	for i := 0; i < 256; i++ {
		b = append(b, byte(i))
	}
	return b
}

func writeImage(t *testing.T, data []byte) (string, string) {
	t.Helper()
	sum := sha256.Sum256(data)
	hexsum := hex.EncodeToString(sum[:])
	path := filepath.Join(t.TempDir(), hexsum)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, hexsum
}

func TestImagePartsReachTheProviderByteExact(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	img := pngBytes()
	path, sum := writeImage(t, img)
	old, oldSum := writeImage(t, append([]byte("GIF89a"), img...))
	rt := New(Options{Log: testLogger(t)})
	params := chatParams(p.BaseURL())
	params.ConversationHistory = []protocol.ChatMessage{
		{Role: "user", Content: "earlier", Parts: []protocol.ContentPart{protocol.TextPart("earlier"),
			{Type: protocol.PartImageFile, ImageFile: &protocol.ImageFile{Path: old, MIMEType: "image/gif", Name: "old.gif", SHA256: oldSum}}}},
		{Role: "assistant", Content: "a gif"},
	}
	params.UserMessage = "what is this?"
	params.UserParts = []protocol.ContentPart{
		protocol.TextPart("what is this?"),
		{Type: protocol.PartImageFile, ImageFile: &protocol.ImageFile{Path: path, MIMEType: "image/png", Name: "red.png", Size: int64(len(img)), SHA256: sum}},
		{Type: protocol.PartImageURL, ImageURL: &protocol.ImageURL{URL: "https://example.com/x.png", Detail: "low"}},
	}
	if _, err := rt.Chat(context.Background(), params, newRecorder().emit); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[0].Messages
	wantUser := `{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` +
		base64.StdEncoding.EncodeToString(img) + `"}},{"type":"image_url","image_url":{"url":"https://example.com/x.png","detail":"low"}}]}`
	if got := string(msgs[len(msgs)-1].Raw); got != wantUser {
		t.Errorf("user message as sent:\n%s\nwant\n%s", got, wantUser)
	}
	wantOld := `{"role":"user","content":[{"type":"text","text":"earlier"},{"type":"image_url","image_url":{"url":"data:image/gif;base64,` +
		base64.StdEncoding.EncodeToString(append([]byte("GIF89a"), img...)) + `"}}]}`
	if got := string(msgs[0].Raw); got != wantOld {
		t.Errorf("history row as sent:\n%s\nwant\n%s", got, wantOld)
	}
	if strings.Contains(string(reqs[0].Body), "image_file") || strings.Contains(string(reqs[0].Body), path) {
		t.Error("the request names the attachment store")
	}
}

func TestImageFileErrorsAreInvalidParams(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t)})
	path, _ := writeImage(t, pngBytes())
	for name, f := range map[string]protocol.ImageFile{
		"missing":       {Path: filepath.Join(t.TempDir(), "gone"), MIMEType: "image/png", Name: "gone.png"},
		"digest":        {Path: path, MIMEType: "image/png", Name: "changed.png", SHA256: strings.Repeat("0", 64)},
		"relative path": {Path: "x.png", MIMEType: "image/png"},
		"not an image":  {Path: path, MIMEType: "application/pdf"},
	} {
		params := chatParams(p.BaseURL())
		params.UserParts = []protocol.ContentPart{protocol.TextPart("x"), {Type: protocol.PartImageFile, ImageFile: &f}}
		_, err := rt.Chat(context.Background(), params, newRecorder().emit)
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Condition() != protocol.CondInvalidParams {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if n := len(p.Requests()); n != 0 {
		t.Errorf("%d requests were sent for unreadable images", n)
	}
}

func TestRequestOptionsPerProvider(t *testing.T) {
	cases := []struct {
		name, provider string
		effort         string
		max            int
		want, absent   []string
	}{
		{"openai", "openai", "high", 500, []string{`"max_completion_tokens":500`, `"reasoning_effort":"high"`}, []string{`"max_tokens"`, `"reasoning":`}},
		{"openrouter", "openrouter", "low", 300, []string{`"max_tokens":300`, `"reasoning":{"effort":"low"}`}, []string{`"reasoning_effort"`, `max_completion_tokens`}},
		{"openrouter none", "openrouter", "none", 0, []string{`"reasoning":{"enabled":false}`}, []string{`"max_tokens"`}},
		{"ollama", "ollama", "medium", 64, []string{`"max_tokens":64`, `"reasoning_effort":"medium"`}, []string{`max_completion_tokens`, `"reasoning":`}},
		{"defaults", "llamacpp", "", 0, nil, []string{`"max_tokens"`, `max_completion_tokens`, `reasoning`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			rt := New(Options{Log: testLogger(t)})
			params := chatParams(p.BaseURL())
			params.Provider.Name = c.provider
			params.ReasoningEffort, params.MaxOutputTokens = c.effort, c.max
			if _, err := rt.Chat(context.Background(), params, newRecorder().emit); err != nil {
				t.Fatal(err)
			}
			body := string(p.Requests()[0].Body)
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %s: %s", w, body)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(body, a) {
					t.Errorf("body has %s: %s", a, body)
				}
			}
		})
	}
	rt := New(Options{Log: testLogger(t)})
	params := chatParams("http://127.0.0.1:1/v1")
	params.ReasoningEffort = "extreme"
	if _, err := rt.Chat(context.Background(), params, newRecorder().emit); err == nil || !strings.Contains(err.Error(), "reasoning_effort") {
		t.Errorf("an unknown effort: %v", err)
	}
}

func TestProviderCostIsReported(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	cost1, cost2 := 0.00125, 0.0005
	first := providertest.CallTurn("", providertest.Call("c1", "todo", map[string]any{}))
	first.Usage = &providertest.Usage{PromptTokens: 100, CompletionTokens: 10, Cost: &cost1}
	p.Enqueue(first,
		providertest.Turn{Chunks: []providertest.Chunk{{Text: "done"}}, Usage: &providertest.Usage{PromptTokens: 150, CompletionTokens: 5, Cost: &cost2}},
	)
	rt := New(Options{Log: testLogger(t)})
	params := chatParams(p.BaseURL())
	params.SessionID = "cost"
	res, err := rt.Chat(context.Background(), params, newRecorder().emit)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Usage.CostReported || res.Usage.EstimatedCost < 0.00174 || res.Usage.EstimatedCost > 0.00176 {
		t.Errorf("usage = %+v", res.Usage)
	}
	b, _ := json.Marshal(res.Usage)
	if !strings.Contains(string(b), `"cost_reported":true`) {
		t.Errorf("usage json %s", b)
	}
	// Without a cost the counters say so.
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "x"}}, Usage: &providertest.Usage{PromptTokens: 1, CompletionTokens: 1}})
	res, _ = rt.Chat(context.Background(), params, newRecorder().emit)
	if res.Usage.CostReported || res.Usage.EstimatedCost != 0 {
		t.Errorf("no cost: %+v", res.Usage)
	}
}

func TestImagesRefusedByTheModelAreMarked(t *testing.T) {
	path, _ := writeImage(t, pngBytes())
	for _, body := range []string{
		`{"error":{"message":"Invalid content type. image_url is only supported by certain models.","type":"invalid_request_error","code":null}}`,
		`{"error":{"code":500,"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"server_error"}}`,
		`{"error":"Model does not support images. Please use a model that does."}`,
	} {
		p := providertest.Start()
		p.Enqueue(providertest.Turn{Status: 400, Body: body})
		rt := New(Options{Log: testLogger(t), RetryDelays: []time.Duration{}})
		params := chatParams(p.BaseURL())
		params.UserParts = []protocol.ContentPart{protocol.TextPart("x"), {Type: protocol.PartImageFile, ImageFile: &protocol.ImageFile{Path: path, MIMEType: "image/png"}}}
		_, err := rt.Chat(context.Background(), params, newRecorder().emit)
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Data.ProviderCode != ProviderCodeImagesUnsupported {
			t.Errorf("%s: err = %v (%+v)", body, err, pe)
		}
		p.Close()
	}
	// The same words without images in the request are left alone.
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.Turn{Status: 400, Body: `{"error":"Model does not support images."}`})
	rt := New(Options{Log: testLogger(t)})
	_, err := rt.Chat(context.Background(), chatParams(p.BaseURL()), newRecorder().emit)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Data.ProviderCode == ProviderCodeImagesUnsupported {
		t.Errorf("no images: %v", err)
	}
}
