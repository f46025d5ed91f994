package backend_test

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

	"talaria/backend"
	"talaria/backend/attachments"
	"talaria/backend/backendtest"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// End-to-end tests of issue 12's chat features through the real backend, the real
// sidecar process and a real SQLite file, against the scripted provider.

// pngFile is a real 1x1 PNG followed by every byte value, so any re-encoding shows.
func pngFile() []byte {
	b, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	for i := 0; i < 256; i++ {
		b = append(b, byte(i))
	}
	return b
}

func setProvider(h *backendtest.Harness, name string) {
	h.T.Helper()
	if _, err := h.Svc.Settings().SaveSettings(context.Background(), backend.SettingsInput{
		ProviderName: name, BaseURL: h.Provider.BaseURL(), Model: "scripted-model"}); err != nil {
		h.T.Fatal(err)
	}
}

func send(h *backendtest.Harness, session, text string, ids ...string) string {
	h.T.Helper()
	st, err := h.Svc.Turns().Send(context.Background(), session, text, ids)
	if err != nil {
		h.T.Fatalf("Send: %v", err)
	}
	return st.StreamID
}

func attach(h *backendtest.Harness, session, name string, data []byte) store.Attachment {
	h.T.Helper()
	a, err := h.Svc.Attachments.AttachFile(context.Background(), session, name, data)
	if err != nil {
		h.T.Fatalf("AttachFile(%s): %v", name, err)
	}
	return a
}

// lastUserRaw is the last user message of the n-th (0-based) chat request as sent.
func lastUserRaw(t *testing.T, p *providertest.Server, n int) string {
	t.Helper()
	reqs := streamed(p)
	if len(reqs) <= n {
		t.Fatalf("%d streamed requests, want more than %d", len(reqs), n)
	}
	msgs := reqs[n].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return string(msgs[i].Raw)
		}
	}
	t.Fatalf("request %d has no user message", n)
	return ""
}

// streamed are the chat requests of turns (not titles or summaries).
func streamed(p *providertest.Server) []providertest.Request {
	var out []providertest.Request
	for _, r := range p.Requests() {
		if r.Stream {
			out = append(out, r)
		}
	}
	return out
}

func TestAttachmentsReachTheProviderByteExact(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	sid := h.NewSession()
	img := pngFile()
	notes := "line one\nline two with \"quotes\" & <tags>\n"
	a1 := attach(h, sid, "notes.txt", []byte(notes))
	a2 := attach(h, sid, "../../etc/red dot.png", img)
	if a1.Kind != store.AttachmentText || a1.MIMEType != "text/plain" || a1.Truncated() {
		t.Errorf("text attachment = %+v", a1)
	}
	if a2.Kind != store.AttachmentImage || a2.MIMEType != "image/png" || a2.Name != "red dot.png" || a2.Size != int64(len(img)) {
		t.Errorf("image attachment = %+v", a2)
	}
	sum := sha256.Sum256(img)
	if a2.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %s", a2.SHA256)
	}
	blob := filepath.Join(h.Svc.Paths.DataDir, "attachments", a2.SHA256[:2], a2.SHA256)
	if b, err := os.ReadFile(blob); err != nil || string(b) != string(img) {
		t.Fatalf("blob at %s: %v", blob, err)
	}
	staged, _ := h.Svc.Attachments.StagedAttachments(ctx, sid)
	if len(staged) != 2 {
		t.Fatalf("staged = %+v", staged)
	}
	h.WaitEnd(send(h, sid, "What do these show?", a1.ID, a2.ID))

	want := `{"role":"user","content":[{"type":"text","text":"<attachment name=\"notes.txt\" type=\"text/plain\" size=\"41 bytes\">\nline one\nline two with \"quotes\" & <tags>\n</attachment>"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(img) + `"}},` +
		`{"type":"text","text":"What do these show?"}]}`
	if got := lastUserRaw(t, h.Provider, 0); got != want {
		t.Errorf("user message as the provider got it:\n%s\nwant\n%s", got, want)
	}
	rows := h.Messages(sid)
	if len(rows[0].Attachments) != 2 || rows[0].Content != "What do these show?" || rows[0].Attachments[1].Name != "red dot.png" {
		t.Fatalf("transcript row = %+v", rows[0])
	}
	if st, _ := h.Svc.Attachments.StagedAttachments(ctx, sid); len(st) != 0 {
		t.Errorf("still staged after sending: %+v", st)
	}
	// The next turn sends them again, the same bytes, in the history.
	h.WaitEnd(send(h, sid, "And now?"))
	hist := streamed(h.Provider)[1].Messages
	var first string
	for _, m := range hist {
		if m.Role == "user" {
			first = string(m.Raw)
			break
		}
	}
	if first != want {
		t.Errorf("history row:\n%s\nwant\n%s", first, want)
	}
	// The window's preview of the image is its bytes.
	pv, err := h.Svc.Attachments.AttachmentPreview(ctx, sid, rows[0].Attachments[1].ID)
	if err != nil || pv.DataURL != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(img) {
		t.Errorf("preview = %.80s, %v", pv.DataURL, err)
	}
}

func TestTextAttachmentsAreCutWithANote(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	if err := h.Svc.Store.SetSetting(ctx, "attachments.text_limit", "1024"); err != nil {
		t.Fatal(err)
	}
	sid := h.NewSession()
	var b strings.Builder
	for i := 0; b.Len() < 5000; i++ {
		b.WriteString("log line number ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(" ✓\n")
	}
	text := b.String()
	a := attach(h, sid, "big.log", []byte(text))
	if !a.Truncated() || a.SentBytes > 1024 || a.SentBytes < 900 || text[a.SentBytes-1] != '\n' {
		t.Fatalf("attachment = %+v (cut at %d)", a, a.SentBytes)
	}
	h.WaitEnd(send(h, sid, "", a.ID)) // a file alone is a message
	got := lastUserRaw(t, h.Provider, 0)
	var msg struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(got), &msg); err != nil || len(msg.Content) != 1 {
		t.Fatalf("user message %s: %v", got, err)
	}
	part := msg.Content[0].Text
	wantHead := `<attachment name="big.log" type="text/` // then the type (text/x-log here), size and note
	if !strings.HasPrefix(part, wantHead) || !strings.Contains(part, `note="only the first `) ||
		!strings.Contains(part, "\n"+text[:a.SentBytes]+"[... the rest of big.log (") || !strings.HasSuffix(part, "is not included ...]\n</attachment>") {
		t.Errorf("cut text part:\n%s", part)
	}
	if rows := h.Messages(sid); rows[0].Content != "" || rows[0].Attachments[0].SentBytes != a.SentBytes {
		t.Errorf("row = %+v", rows[0])
	}
}

func TestAttachmentsThatCannotBeSent(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	sid := h.NewSession()
	var ae *attachments.AttachmentError
	for name, data := range map[string][]byte{
		"archive.zip": append([]byte("PK\x03\x04"), make([]byte, 100)...),
		"empty.txt":   {},
		"latin1.txt":  []byte("caf\xe9"),
		"huge.txt":    make([]byte, attachments.MaxAttachmentBytes+1),
	} {
		if _, err := h.Svc.Attachments.AttachFile(ctx, sid, name, data); !errors.As(err, &ae) || ae.Name != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A model known to take no images: the message with one is refused before it is
	// saved; without the image it goes.
	setProvider(h, "ollama")
	h.Provider.SetModelMeta("scripted-model", providertest.ModelMeta{ContextLength: 8192})
	img := attach(h, sid, "a.png", pngFile())
	var refused *turn.ImagesRefusedError
	if _, err := h.Svc.Turns().Send(ctx, sid, "look", []string{img.ID}); !errors.As(err, &refused) || refused.Runtime {
		t.Fatalf("send with an image to a text model = %v", err)
	}
	if rows := h.Messages(sid); len(rows) != 0 {
		t.Errorf("a refused message was saved: %+v", rows)
	}
	if n := len(h.Provider.Requests()); n != 0 {
		t.Errorf("%d requests for a refused message", n)
	}
	if err := h.Svc.Attachments.RemoveAttachment(ctx, sid, img.ID); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(send(h, sid, "look"))
	// A vision model takes it.
	h.Provider.SetModelMeta("llava", providertest.ModelMeta{ContextLength: 8192, Vision: true})
	if _, err := h.Svc.Settings().SetChatModel(ctx, sid, "llava"); err != nil {
		t.Fatal(err)
	}
	img = attach(h, sid, "a.png", pngFile())
	h.WaitEnd(send(h, sid, "and this", img.ID))
	if got := lastUserRaw(t, h.Provider, 1); !strings.Contains(got, `"type":"image_url"`) {
		t.Errorf("vision model request: %s", got)
	}
	// Back on the text model, the history's image is left out with a note.
	if _, err := h.Svc.Settings().SetChatModel(ctx, sid, ""); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(send(h, sid, "again"))
	body := string(streamed(h.Provider)[2].Body)
	if strings.Contains(body, "image_url") || !strings.Contains(body, "[image a.png left out: the model takes no images]") {
		t.Errorf("text model with an image in the history:\n%s", body)
	}
}

func TestAttachmentsGoWithTheirChatAndSurviveExportImport(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	sid := h.NewSession()
	img := pngFile()
	a := attach(h, sid, "keep.png", img)
	h.WaitEnd(send(h, sid, "keep this", a.ID))
	exp, err := h.Svc.Chats().ExportSession(ctx, sid, backend.ExportJSON)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(exp.Content, base64.StdEncoding.EncodeToString(img)) {
		t.Fatal("the export lacks the image's bytes")
	}
	blob := filepath.Join(h.Svc.Paths.DataDir, "attachments", a.SHA256[:2], a.SHA256)
	// Deleting the chat deletes the file (nothing else names it).
	if err := h.Svc.Chats().DeleteSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Svc.Attachments.SweepAttachments(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(blob); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file of a deleted chat is still there: %v", err)
	}
	// Into another Talaria: the import brings the file, and the next turn sends it.
	h2 := backendtest.New(t, "")
	imp, err := h2.Svc.Chats().ImportSession(ctx, []byte(exp.Content))
	if err != nil {
		t.Fatal(err)
	}
	rows := h2.Messages(imp.ID)
	if len(rows[0].Attachments) != 1 || rows[0].Attachments[0].Name != "keep.png" {
		t.Fatalf("imported rows = %+v", rows)
	}
	h2.WaitEnd(send(h2, imp.ID, "what was it?"))
	if body := string(streamed(h2.Provider)[0].Body); !strings.Contains(body, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(img)) {
		t.Errorf("the imported image did not reach the provider")
	}
	// A document whose bytes do not match its digest is refused whole.
	bad := strings.Replace(exp.Content, base64.StdEncoding.EncodeToString(img), base64.StdEncoding.EncodeToString([]byte("not it")), 1)
	var ie *store.ImportError
	if _, err := h2.Svc.Chats().ImportSession(ctx, []byte(bad)); !errors.As(err, &ie) {
		t.Errorf("import with a wrong digest = %v", err)
	}
}

func TestCompactionSendsTheSummaryAndRecentTurnsAndKeepsTheTranscript(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	setProvider(h, "ollama")
	// Ollama runs the model with 4,000 tokens of context.
	h.Provider.SetModelMeta("scripted-model", providertest.ModelMeta{ContextLength: 131072, RunningContext: 4000})
	h.Provider.SplitAux(true)
	sid := h.NewSession()
	long := strings.Repeat("word ", 300) // ~1,500 bytes, ~375 tokens
	for i := range 3 {
		h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "answer " + string(rune('A'+i)) + " " + long}},
			Usage: &providertest.Usage{PromptTokens: 1000 * (i + 1), CompletionTokens: 380}})
		st := send(h, sid, "question "+string(rune('A'+i))+" "+long)
		h.WaitEnd(st)
	}
	fig, err := h.Svc.Turns().ChatFigures(ctx, sid, nil)
	if err != nil || fig.Context.ContextLength != 4000 || fig.Context.Estimated || fig.Context.UsedTokens != 3000+380 {
		t.Fatalf("figures before = %+v, %v", fig.Context, err)
	}
	// The fourth turn would pass 80 % of 4,000 tokens: the older turns are summarised,
	// the latest exchange (about 750 tokens) fits the 30 % kept as it is.
	h.Provider.EnqueueAux(providertest.TextTurn("SUMMARY: the user asked A and B; answers A and B were given."))
	st := send(h, sid, "question D")
	frames := h.WaitEnd(st)
	events := ""
	for _, f := range frames {
		events += f.Event + " "
	}
	if !strings.Contains(events, "compressing") || !strings.Contains(events, "compression_finished") {
		t.Errorf("frames: %s", events)
	}
	var aux *providertest.Request
	for _, r := range h.Provider.Requests() {
		if !r.Stream && strings.Contains(string(r.Body), "question A") {
			r := r
			aux = &r
		}
	}
	if aux == nil || !strings.Contains(string(aux.Body), "answer B") {
		t.Fatalf("no summarising request with the older turns")
	}
	last := streamed(h.Provider)[3]
	body := string(last.Body)
	if !strings.Contains(body, "SUMMARY: the user asked A and B") || strings.Contains(body, "question A") {
		t.Errorf("the request after compaction:\n%.2000s", body)
	}
	if !strings.Contains(body, "question C") || !strings.Contains(body, "answer C") || !strings.Contains(body, "question D") {
		t.Errorf("the recent turns are missing from the request after compaction:\n%.3000s", body)
	}
	if last.Messages[0].Role != "system" || !strings.Contains(last.Messages[0].Content, "SUMMARY") {
		t.Errorf("the summary is not in the system message: %s", last.Messages[0].Raw)
	}
	rows := h.Messages(sid)
	var summary *store.Message
	for i := range rows {
		if rows[i].Kind == store.KindSummary {
			summary = &rows[i]
		}
	}
	if summary == nil || summary.SummaryCovers != 4 || !strings.HasPrefix(summary.Content, "SUMMARY") {
		t.Fatalf("summary row = %+v", summary)
	}
	texts := ""
	for _, m := range rows {
		texts += m.Content
	}
	for _, w := range []string{"question A", "answer A", "question B", "answer B", "question C", "question D"} {
		if !strings.Contains(texts, w) {
			t.Errorf("the transcript lost %q", w)
		}
	}
	// The turn after keeps sending the summary, not the summarised turns.
	h.WaitEnd(send(h, sid, "question E"))
	if body := string(streamed(h.Provider)[4].Body); strings.Contains(body, "question A") || !strings.Contains(body, "SUMMARY") {
		t.Errorf("the turn after compaction:\n%.2000s", body)
	}

	// A second compaction, in a chat whose turns now read only the rows from the first
	// summary on: the new summary extends the first and stands for the rows before the
	// kept exchange, counted from the start of the transcript.
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "answer F " + long}},
		Usage: &providertest.Usage{PromptTokens: 3500, CompletionTokens: 380}})
	h.WaitEnd(send(h, sid, "question F "+long))
	h.Provider.EnqueueAux(providertest.TextTurn("SUMMARY2: A to E were asked and answered."))
	h.WaitEnd(send(h, sid, "question G"))
	var aux2 string
	for _, r := range h.Provider.Requests() {
		if !r.Stream && strings.Contains(string(r.Body), "SUMMARY: the user asked A and B") {
			aux2 = string(r.Body)
		}
	}
	if !strings.Contains(aux2, "question C") || strings.Contains(aux2, "question A ") {
		t.Errorf("the second summarising request (the first summary and the rows after it):\n%.3000s", aux2)
	}
	reqs := streamed(h.Provider)
	body = string(reqs[len(reqs)-1].Body)
	if !strings.Contains(body, "SUMMARY2") || strings.Contains(body, "question C") || !strings.Contains(body, "question F") || !strings.Contains(body, "question G") {
		t.Errorf("the request after the second compaction:\n%.3000s", body)
	}
	rows = h.Messages(sid)
	var second *store.Message
	for i := range rows {
		if rows[i].Kind == store.KindSummary && strings.HasPrefix(rows[i].Content, "SUMMARY2") {
			second = &rows[i]
		}
	}
	if second == nil || second.SummaryCovers <= summary.SummaryCovers || second.SummaryCovers >= len(rows) ||
		rows[second.SummaryCovers].Role != "user" {
		t.Fatalf("second summary row = %+v (rows %d)", second, len(rows))
	}
	// It stands for exactly the rows the request left out: the first user row it does
	// not cover is sent, the last one it covers is not.
	kept := rows[second.SummaryCovers].Content
	var covered string
	for _, m := range rows[:second.SummaryCovers] {
		if m.Role == "user" && m.Kind == "" {
			covered = m.Content
		}
	}
	if !strings.Contains(body, kept[:10]) || strings.Contains(body, covered[:10]) {
		t.Errorf("the second summary covers up to %q and keeps %q, but the request was:\n%.3000s", covered[:10], kept[:10], body)
	}
}

func TestSummariseAndContinueAfterContextTooLong(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	h.Provider.SplitAux(true)
	sid := h.NewSession()
	h.WaitEnd(send(h, sid, "first question"))
	h.WaitEnd(send(h, sid, "second question"))
	h.Provider.Enqueue(providertest.Turn{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`})
	st := send(h, sid, "third question")
	frames := h.WaitEnd(st)
	var ae turn.AppError
	for _, f := range frames {
		if f.Event == protocol.EvAppError {
			_ = json.Unmarshal(f.Data, &ae)
		}
	}
	if ae.Type != turn.ErrTypeContextTooLarge {
		t.Fatalf("apperror = %+v", ae)
	}
	h.Provider.EnqueueAux(providertest.TextTurn("SUMMARY of the first two questions"))
	res, err := h.Svc.Turns().Compact(ctx, sid, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary == nil || res.Summary.SummaryCovers != 4 || res.Retried == nil {
		t.Fatalf("compact = %+v", res)
	}
	h.WaitEnd(res.Retried.StreamID)
	body := string(streamed(h.Provider)[3].Body)
	if !strings.Contains(body, "SUMMARY of the first two questions") || strings.Contains(body, "first question") || !strings.Contains(body, "third question") {
		t.Errorf("the retried request:\n%s", body)
	}
	rows := h.Messages(sid)
	kinds := []string{}
	for _, m := range rows {
		kinds = append(kinds, m.Role+":"+m.Kind)
	}
	want := "user: assistant: user: assistant: system:summary user: assistant:"
	if strings.Join(kinds, " ") != want {
		t.Errorf("rows = %s, want %s", strings.Join(kinds, " "), want)
	}
	// Nothing older than the latest exchange: nothing to summarise.
	other := h.NewSession()
	h.WaitEnd(send(h, other, "only question"))
	var nothing *turn.NothingToCompactError
	if _, err := h.Svc.Turns().Compact(ctx, other, false); !errors.As(err, &nothing) {
		t.Errorf("compact of one exchange = %v", err)
	}
}

func TestChatSettingsReachTheRequest(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	setProvider(h, "openai")
	if err := h.Svc.Settings().SetDefaultSystemPrompt(ctx, "Default instructions."); err != nil {
		t.Fatal(err)
	}
	sid := h.NewSession()
	cs, err := h.Svc.Settings().GetChatSettings(ctx, sid)
	if err != nil || cs.Options.SystemPrompt != "Default instructions." || !cs.Features.ReasoningEffort || !cs.Features.Images {
		t.Fatalf("a new chat's settings = %+v, %v", cs, err)
	}
	if _, err := h.Svc.Settings().SetChatOptions(ctx, sid, backend.ChatOptions{SystemPrompt: "Answer in French.", Tools: []string{"none"},
		ReasoningEffort: "high", MaxOutputTokens: 321}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Svc.Settings().SetChatModel(ctx, sid, "gpt-5-mini"); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(send(h, sid, "bonjour"))
	req := streamed(h.Provider)[0]
	body := string(req.Body)
	for _, w := range []string{`"model":"gpt-5-mini"`, `"reasoning_effort":"high"`, `"max_completion_tokens":321`, `Answer in French.`} {
		if !strings.Contains(body, w) {
			t.Errorf("request lacks %s: %s", w, body)
		}
	}
	if strings.Contains(body, `"tools"`) {
		t.Errorf("tools were offered with tools off: %s", body)
	}
	var ce *backend.ChatOptionsError
	if _, err := h.Svc.Settings().SetChatOptions(ctx, sid, backend.ChatOptions{ReasoningEffort: "maximum"}); !errors.As(err, &ce) || ce.Field != "reasoning_effort" {
		t.Errorf("a bad effort = %v", err)
	}
	// A background task started from the chat runs with its settings.
	task, err := h.Svc.Tasks.Start(ctx, sid, "summarise the web in one word")
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(func() bool { return len(streamed(h.Provider)) >= 2 })
	reqs := streamed(h.Provider)
	if len(reqs) < 2 {
		t.Fatalf("the task %s sent no request", task.ID)
	}
	tb := string(reqs[1].Body)
	for _, w := range []string{`"model":"gpt-5-mini"`, `"reasoning_effort":"high"`, `"max_completion_tokens":321`, `Answer in French.`} {
		if !strings.Contains(tb, w) {
			t.Errorf("the background task's request lacks %s: %s", w, tb)
		}
	}
}

func TestCostFromTheProviderOrAUserPriceNeverGuessed(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	sid := h.NewSession()
	cost := 0.0042
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "paid"}},
		Usage: &providertest.Usage{PromptTokens: 1000, CompletionTokens: 200, Cost: &cost}})
	st := send(h, sid, "one")
	frames := h.WaitEnd(st)
	var done struct {
		Usage      protocol.Usage `json:"usage"`
		CostSource string         `json:"cost_source"`
	}
	for _, f := range frames {
		if f.Event == protocol.EvDone {
			_ = json.Unmarshal(f.Data, &done)
		}
	}
	if done.CostSource != store.CostProvider || done.Usage.EstimatedCost != cost {
		t.Errorf("done = %+v", done)
	}
	// No reported cost and no price: unknown, not zero.
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "free?"}}, Usage: &providertest.Usage{PromptTokens: 1000, CompletionTokens: 100}})
	h.WaitEnd(send(h, sid, "two"))
	// A price the user set: $2 per million in, $8 out.
	if _, err := h.Svc.Settings().SetModelSettings(ctx, "scripted-model", backend.ModelSettings{Price: &turn.Price{Input: 2, Output: 8}}); err != nil {
		t.Fatal(err)
	}
	h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "priced"}}, Usage: &providertest.Usage{PromptTokens: 1000, CompletionTokens: 100}})
	h.WaitEnd(send(h, sid, "three"))
	fig, err := h.Svc.Turns().ChatFigures(ctx, sid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Turns) != 3 {
		t.Fatalf("turns = %+v", fig.Turns)
	}
	if fig.Turns[0].CostSource != store.CostProvider || fig.Turns[1].CostSource != store.CostUnknown || fig.Turns[1].Usage.EstimatedCost != 0 ||
		fig.Turns[2].CostSource != store.CostPrice {
		t.Errorf("turn costs = %+v", fig.Turns)
	}
	want := 0.0042 + (1000*2+100*8)/1e6
	if fig.CostKnown != 2 || fig.CostUnknown != 1 || fig.Cost < want-1e-9 || fig.Cost > want+1e-9 {
		t.Errorf("chat cost = %v (%d known, %d unknown), want %v", fig.Cost, fig.CostKnown, fig.CostUnknown, want)
	}
	// Asked for one turn's stream (and one that is no turn): that turn's figures, and the
	// chat's cost over every turn all the same; none asked: the cost only.
	one, err := h.Svc.Turns().ChatFigures(ctx, sid, []string{fig.Turns[1].StreamID, "no-such-stream"})
	if err != nil || len(one.Turns) != 1 || one.Turns[0].StreamID != fig.Turns[1].StreamID || one.Cost != fig.Cost || one.CostKnown != 2 {
		t.Errorf("figures of one turn = %+v, %v", one, err)
	}
	if none, err := h.Svc.Turns().ChatFigures(ctx, sid, []string{}); err != nil || len(none.Turns) != 0 || none.Cost != fig.Cost {
		t.Errorf("figures of no turn = %+v, %v", none, err)
	}
	if s, _ := h.Svc.Store.GetSession(ctx, sid); s.Usage.EstimatedCost < want-1e-9 || s.Usage.EstimatedCost > want+1e-9 {
		t.Errorf("session cost = %v", s.Usage.EstimatedCost)
	}
}

func TestRetryAndEditKeepTheOldBranchAsAFork(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	sid := h.NewSession()
	img := attach(h, sid, "a.png", pngFile())
	h.Provider.Enqueue(providertest.TextTurn("first answer"))
	h.WaitEnd(send(h, sid, "the question", img.ID))
	before, _ := h.Svc.Store.GetSession(ctx, sid)

	// Retry with another model: the answer is replaced; the fork keeps it.
	h.Provider.Enqueue(providertest.TextTurn("second answer"))
	b, err := h.Svc.Turns().Retry(ctx, sid, "other-model")
	if err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(b.StreamID)
	req := streamed(h.Provider)[1]
	if req.Model != "other-model" || !strings.Contains(string(req.Body), "image_url") {
		t.Errorf("retried request model %q, image kept: %v", req.Model, strings.Contains(string(req.Body), "image_url"))
	}
	rows := h.Messages(sid)
	if len(rows) != 2 || rows[0].Content != "the question" || rows[1].Content != "second answer" || len(rows[0].Attachments) != 1 {
		t.Fatalf("rows after retry = %+v", rows)
	}
	if s, _ := h.Svc.Store.GetSession(ctx, sid); s.Model != before.Model {
		t.Errorf("the retry changed the chat's model to %q", s.Model)
	}
	fork := h.Messages(b.ForkID)
	if len(fork) != 2 || fork[1].Content != "first answer" || len(fork[0].Attachments) != 1 {
		t.Fatalf("fork rows = %+v", fork)
	}
	fs, _ := h.Svc.Store.GetSession(ctx, b.ForkID)
	if !strings.HasSuffix(fs.Title, "(earlier answer)") || fs.ForkedFrom != sid {
		t.Errorf("fork = %+v", fs)
	}

	// Edit the question and send it again.
	h.Provider.Enqueue(providertest.TextTurn("third answer"))
	cur, _ := h.Svc.Store.GetSession(ctx, sid)
	e, err := h.Svc.Turns().EditAndResend(ctx, sid, rows[0].ID, "the better question", cur.Revision)
	if err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(e.StreamID)
	rows = h.Messages(sid)
	if len(rows) != 2 || rows[0].Content != "the better question" || rows[1].Content != "third answer" {
		t.Fatalf("rows after edit = %+v", rows)
	}
	if fork := h.Messages(e.ForkID); fork[0].Content != "the question" || fork[1].Content != "second answer" {
		t.Errorf("edit fork = %+v", fork)
	}
	// A stale revision is refused and nothing changes.
	var conflict *store.ConflictError
	if _, err := h.Svc.Turns().EditAndResend(ctx, sid, rows[0].ID, "x", cur.Revision); !errors.As(err, &conflict) {
		t.Errorf("stale edit = %v", err)
	}
	// The attachment file is kept while a chat names it.
	blob := filepath.Join(h.Svc.Paths.DataDir, "attachments", img.SHA256[:2], img.SHA256)
	if _, err := h.Svc.Attachments.SweepAttachments(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(blob); err != nil {
		t.Errorf("a file still in use was removed: %v", err)
	}
}

func TestRegenerateTitle(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	h.Provider.SplitAux(true)
	sid := h.NewSession()
	h.Provider.EnqueueAux(providertest.TextTurn("First title"))
	h.WaitEnd(send(h, sid, "plan a trip to Lisbon"))
	h.WaitTitle(sid, "First title")
	if _, err := h.Svc.Chats().RenameSession(ctx, sid, "mine"); err != nil {
		t.Fatal(err)
	}
	h.Provider.EnqueueAux(providertest.TextTurn("\"Lisbon Trip Planning.\""))
	title, err := h.Svc.Turns().RegenerateTitle(ctx, sid)
	if err != nil || title != "Lisbon Trip Planning" {
		t.Fatalf("RegenerateTitle = %q, %v", title, err)
	}
	s, _ := h.Svc.Store.GetSession(ctx, sid)
	if s.Title != title || s.TitleManual {
		t.Errorf("session = %+v", s)
	}
}

func TestContextMeterFromEachProvidersMetadata(t *testing.T) {
	parent, h := t, backendtest.New(t, "")
	for _, c := range []struct {
		provider string
		meta     providertest.ModelMeta
		want     int64
		vision   string
	}{
		{"ollama", providertest.ModelMeta{ContextLength: 131072, RunningContext: 8192, Vision: true}, 8192, "yes"},
		{"ollama", providertest.ModelMeta{ContextLength: 131072}, 131072, "no"},
		{"llamacpp", providertest.ModelMeta{ContextLength: 4096, Vision: false}, 4096, "no"},
		{"lmstudio", providertest.ModelMeta{ContextLength: 32768, RunningContext: 16384, Vision: true}, 16384, "yes"},
		{"openrouter", providertest.ModelMeta{ContextLength: 200000, Vision: true, Reasoning: true}, 200000, "yes"},
	} {
		// One app and sidecar for every provider (saving the settings drops the cached
		// figures); the harness's helpers report to the subtest while it runs.
		t.Run(c.provider, func(t *testing.T) {
			h.T = t
			defer func() { h.T = parent }()
			ctx := context.Background()
			setProvider(h, c.provider)
			h.Provider.SetModelMeta("scripted-model", c.meta)
			info, err := h.Svc.Settings().ModelInfo(ctx, "")
			if err != nil || info.ContextLength != c.want || info.ContextSource != "provider" || info.Vision != c.vision {
				t.Fatalf("ModelInfo = %+v, %v", info, err)
			}
			sid := h.NewSession()
			fig, _ := h.Svc.Turns().ChatFigures(ctx, sid, nil)
			if !fig.Context.Available || fig.Context.ContextLength != c.want || !fig.Context.Estimated {
				t.Errorf("meter of an empty chat = %+v", fig.Context)
			}
			h.Provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "ok"}}, Usage: &providertest.Usage{PromptTokens: 1234, CompletionTokens: 5}})
			h.WaitEnd(send(h, sid, "hi"))
			fig, _ = h.Svc.Turns().ChatFigures(ctx, sid, nil)
			if fig.Context.UsedTokens != 1239 || fig.Context.Estimated {
				t.Errorf("meter after a turn = %+v", fig.Context)
			}
		})
	}
	// A provider that publishes nothing: unknown until the user sets the window.
	h = backendtest.New(t, "")
	ctx := context.Background()
	info, _ := h.Svc.Settings().ModelInfo(ctx, "")
	if info.ContextLength != 0 || info.ContextSource != "" {
		t.Errorf("no metadata: %+v", info)
	}
	if _, err := h.Svc.Settings().SetModelSettings(ctx, "scripted-model", backend.ModelSettings{ContextLength: 6000}); err != nil {
		t.Fatal(err)
	}
	if info, _ = h.Svc.Settings().ModelInfo(ctx, ""); info.ContextLength != 6000 || info.ContextSource != "setting" {
		t.Errorf("with a setting: %+v", info)
	}
}
