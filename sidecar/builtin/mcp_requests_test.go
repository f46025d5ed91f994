//go:build linux

//lint:file-ignore SA1019 the test server samples, which MCP 2026-07-28 deprecates (SEP-2577) and Talaria still serves (mcp_sampling.go)

package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"talaria/sidecar/mcp/mcptest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// everythingParams are chat.start params enabling server-everything as "every", its
// tools allowed (so only what the server asks of the chat shows a card).
func everythingParams(t *testing.T, p *providertest.Server, session string) protocol.ChatStartParams {
	srv := mcptest.Find(t)
	cp := toolParams(p, session, t.TempDir())
	cp.MCPServers = []protocol.MCPServer{srv.EverythingServer("every")}
	cp.ApprovalAllowlist = []string{protocol.MCPServerPattern("every")}
	return cp
}

// toolText is the text the model got back from the run's tool calls, joined.
func toolText(res protocol.ChatResult) string {
	var sb strings.Builder
	for _, m := range res.Messages {
		if m.Role == "tool" {
			sb.WriteString(m.Content + "\n")
		}
	}
	return sb.String()
}

func clarifyAnswer(t *testing.T, rt *Runtime, session, id string, answers ...any) {
	t.Helper()
	b, _ := json.Marshal(answers)
	if ok, err := respond(rt, session, id, string(b)); !ok || err != nil {
		t.Fatalf("answer %s: %v %v", b, ok, err)
	}
}

// TestMCPElicitationIsAClarify: server-everything's elicitation (13 fields) comes as
// three clarify cards of the schema's fields (required first, then by name; choices for
// booleans and short enums); the answers reach the server converted to the schema's
// types. A dismissed card is the MCP decline; {"action": "cancel"} is its cancel.
func TestMCPElicitationIsAClarify(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	defer rt.Close()
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("c1", "every__trigger-elicitation-request", map[string]any{})),
		providertest.CallTurn("", providertest.Call("c2", "every__trigger-elicitation-request", map[string]any{})),
		providertest.CallTurn("", providertest.Call("c3", "every__trigger-elicitation-request", map[string]any{})),
		providertest.TextTurn("thanks"))
	run := startChat(t, rt, everythingParams(t, p, "s1"))

	var cards [5]protocol.ClarifyData
	run.waitFor(protocol.EvClarify, 1, &cards[0])
	q := cards[0].Questions
	if cards[0].Kind != protocol.ClarifyKindClarify || !cards[0].Elicitation || len(q) != 5 ||
		!strings.HasPrefix(q[0].Question, "The MCP server every asks: Please provide inputs for the following fields:") ||
		!strings.Contains(q[0].Question, "Your full, legal name") || strings.Contains(q[0].Question, "Optional") ||
		!strings.Contains(q[1].Question, "Your date of birth") || !strings.Contains(q[1].Question, "Optional") ||
		strings.Join(q[2].Choices, ",") != "Yes,No" {
		t.Fatalf("first card: %+v", cards[0])
	}
	clarifyAnswer(t, rt, "s1", cards[0].ClarifyID, "Ada Lovelace", "-", "Yes", "-", "-")
	run.waitFor(protocol.EvClarify, 2, &cards[1])
	q = cards[1].Questions
	// homepage, integer, legacyTitledEnum (5 values: listed in the question),
	// number, titledMultipleSelectEnum (3 titled values: choices, several).
	if len(q) != 5 || !strings.Contains(q[1].Question, "A number.") || len(q[2].Choices) != 0 ||
		!strings.Contains(q[2].Question, "One of: Cats, Dogs, Birds, Fish, Reptiles") ||
		strings.Join(q[4].Choices, ",") != "Tuna,Salmon,Trout" || !q[4].MultiSelect {
		t.Fatalf("second card: %+v", cards[1])
	}
	clarifyAnswer(t, rt, "s1", cards[1].ClarifyID, "-", "7", "Dogs", "-", []string{"Salmon", "Trout"})
	run.waitFor(protocol.EvClarify, 3, &cards[2])
	if q = cards[2].Questions; len(q) != 3 || strings.Join(q[0].Choices, ",") != "Superman,Green Lantern,Wonder Woman" {
		t.Fatalf("third card: %+v", cards[2])
	}
	clarifyAnswer(t, rt, "s1", cards[2].ClarifyID, "Wonder Woman", "Piano, drums", "Ross")

	// The second call: dismissed.
	run.waitFor(protocol.EvClarify, 4, &cards[3])
	if ok, err := respond(rt, "s1", cards[3].ClarifyID, "null"); !ok || err != nil {
		t.Fatalf("dismiss: %v %v", ok, err)
	}
	// The third: cancelled, which the server gets as cancel (not decline).
	run.waitFor(protocol.EvClarify, 5, &cards[4])
	if ok, err := respond(rt, "s1", cards[4].ClarifyID, `{"action": "cancel"}`); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	res := run.mustResult()
	got := strings.Join(strings.Fields(toolText(res)), " ")
	if strings.Count(got, `"action": "decline"`) != 1 || strings.Count(got, `"action": "cancel"`) != 1 {
		t.Fatalf("the server did not get one decline and one cancel: %s", got)
	}
	for _, want := range []string{"- Name: Ada Lovelace", "- Agreed to terms: true", "- Favorite Integer: 7",
		`"legacyTitledEnum": "pet-2"`, `"titledMultipleSelectEnum": [ "fish-2", "fish-3" ]`, `"titledSingleSelectEnum": "hero-3"`,
		`"untitledMultipleSelectEnum": [ "Piano", "Drums" ]`, `"untitledSingleSelectEnum": "Ross"`, `"action": "decline"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("the server did not get %s: %s", want, got)
		}
	}
	if strings.Contains(got, "Birthdate") || strings.Contains(got, `"homepage"`) {
		t.Fatalf("a skipped field reached the server: %s", got)
	}
}

// TestMCPSamplingAsksThenUsesTheChatModel: server-everything's sampling request shows an
// approval card (not covered by the server's tools being allowed) with its prompt;
// allowed, the chat's model answers it without tools and the server gets the answer;
// denied, the server gets an error and the model is not asked.
func TestMCPSamplingAsksThenUsesTheChatModel(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	defer rt.Close()
	usage := func(tr providertest.Turn, in, out int) providertest.Turn {
		tr.Usage = &providertest.Usage{PromptTokens: in, CompletionTokens: out}
		return tr
	}
	p.Enqueue(
		usage(providertest.CallTurn("", providertest.Call("c1", "every__trigger-sampling-request", map[string]any{"prompt": "write a haiku about roots", "maxTokens": 60})), 10, 1),
		usage(providertest.TextTurn("roots ", "run deep"), 100, 20), // the sampling
		usage(providertest.CallTurn("", providertest.Call("c2", "every__trigger-sampling-request", map[string]any{"prompt": "again", "maxTokens": 60})), 30, 2),
		usage(providertest.TextTurn("done"), 50, 3))
	run := startChat(t, rt, everythingParams(t, p, "s1"))

	var ap protocol.ApprovalData
	run.waitFor(protocol.EvApproval, 1, &ap)
	args, _ := json.Marshal(ap.Args)
	if ap.Kind != protocol.ApprovalKindMCP || ap.MCP == nil || ap.MCP.Server != "every" || ap.MCP.Tool != "sampling" ||
		ap.Pattern != "mcp-sampling:every" || strings.Join(ap.Choices, ",") != "once,session,deny" ||
		!strings.Contains(ap.Description, "write a haiku about roots") || !strings.Contains(string(args), "write a haiku about roots") ||
		!strings.Contains(string(args), `"system_prompt":"You are a helpful test server."`) || !strings.Contains(string(args), `"max_tokens":60`) {
		t.Fatalf("sampling approval: %+v %s", ap, args)
	}
	if res, _ := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap.ApprovalID, Choice: protocol.ChoiceOnce}); !res.OK {
		t.Fatal("approval not settled")
	}
	var ap2 protocol.ApprovalData
	run.waitFor(protocol.EvApproval, 2, &ap2)
	if res, _ := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap2.ApprovalID, Choice: protocol.ChoiceDeny}); !res.OK {
		t.Fatal("approval not settled")
	}
	res := run.mustResult()
	got := toolText(res)
	if !strings.Contains(got, "roots run deep") || !strings.Contains(got, "scripted-model") {
		t.Fatalf("the server did not get the model's answer: %s", got)
	}
	if !strings.Contains(got, "sampling refused: the user did not allow it") {
		t.Fatalf("the denied sampling: %s", got)
	}
	// The sampling's tokens count in the chat's usage (a usage frame says so as it
	// ends), not in its context (the last step's).
	if res.Usage.InputTokens != 190 || res.Usage.OutputTokens != 26 || res.Context.LastPromptTokens != 50 {
		t.Errorf("usage %+v, context %+v: want 190 in, 26 out, the context's 50", res.Usage, res.Context)
	}
	var sawSampling bool
	for _, f := range run.of(protocol.EvUsage) {
		var u protocol.Usage
		json.Unmarshal(f, &u)
		sawSampling = sawSampling || (u.InputTokens == 110 && u.OutputTokens == 21)
	}
	if !sawSampling {
		t.Errorf("no usage frame counted the sampling (110 in, 21 out)")
	}
	reqs := p.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4 (two turns' steps, one sampling, the end)", len(reqs))
	}
	s := reqs[1]
	if len(s.Tools) != 0 || len(s.Messages) != 2 || s.Messages[0].Role != "system" || s.Messages[0].Content != "You are a helpful test server." ||
		!strings.Contains(s.Messages[1].Content, "write a haiku about roots") || s.MaxTokens != 60 {
		t.Fatalf("sampling request: %+v", s)
	}
}

// vaultyServer is an MCP server (the official Go SDK's, over streamable HTTP) with one
// tool, login, that elicits a user name and a password and answers with both; got
// receives what it was sent.
func vaultyServer(t *testing.T) (protocol.MCPServer, chan map[string]any) {
	got := make(chan map[string]any, 4)
	srv := sdk.NewServer(&sdk.Implementation{Name: "vaulty", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "login", Description: "Logs in."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Log in to the vault.", RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"user":     map[string]any{"type": "string", "title": "User name"},
				"password": map[string]any{"type": "string", "title": "Password", "description": "Your vault password"},
			},
			"required": []string{"user", "password"},
		}})
		if err != nil {
			return nil, nil, err
		}
		got <- res.Content
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s: logged in as %v with %v", res.Action, res.Content["user"], res.Content["password"])}}}, nil, nil
	})
	// unlock elicits a numeric PIN: a secret, though not a string.
	sdk.AddTool(srv, &sdk.Tool{Name: "unlock", Description: "Unlocks."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Unlock the vault.", RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"pin": map[string]any{"type": "integer", "title": "PIN"}},
			"required":   []string{"pin"},
		}})
		if err != nil {
			return nil, nil, err
		}
		got <- res.Content
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s: unlocked with %v", res.Action, res.Content["pin"])}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return protocol.MCPServer{Name: "vaulty", Transport: protocol.MCPTransportHTTP, URL: hs.URL}, got
}

// TestMCPElicitedPINGoesThroughTheVault: a numeric PIN field is a secret too: it is
// asked on a vault card (no clarify card), reaches the server as a number, and no frame
// holds it.
func TestMCPElicitedPINGoesThroughTheVault(t *testing.T) {
	const pin = "49217351"
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	defer rt.Close()
	cfg, got := vaultyServer(t)
	p.Enqueue(providertest.CallTurn("", providertest.Call("c1", "vaulty__unlock", map[string]any{})), providertest.TextTurn("in"))
	cp := toolParams(p, "s1", t.TempDir())
	cp.MCPServers = []protocol.MCPServer{cfg}
	cp.ApprovalAllowlist = []string{protocol.MCPServerPattern("vaulty")}
	run := startChat(t, rt, cp)
	var vault protocol.ClarifyData
	run.waitFor(protocol.EvClarify, 1, &vault)
	if vault.Kind != protocol.ClarifyKindVault || !regexp.MustCompile(`^MCP_VAULTY_PIN_[0-9A-F]{32}$`).MatchString(vault.Name) {
		t.Fatalf("the PIN was asked on %+v", vault)
	}
	if ok, err := respond(rt, "s1", vault.ClarifyID, `{"value":"`+pin+`"}`); !ok || err != nil {
		t.Fatalf("vault answer: %v %v", ok, err)
	}
	run.mustResult()
	if sent := <-got; sent["pin"] != float64(49217351) {
		t.Fatalf("the server got %#v", sent)
	}
	for _, f := range run.list() {
		if strings.Contains(string(f.data), pin) {
			t.Fatalf("the %s frame holds the PIN: %s", f.event, f.data)
		}
	}
}

// TestMCPElicitedSecretGoesThroughTheVault: a password field is asked on a vault card
// (not in the clarify), its value reaches the server, and no frame and nothing the
// model reads holds it (the server's answer echoing it is redacted).
func TestMCPElicitedSecretGoesThroughTheVault(t *testing.T) {
	const secret = "hunter2-very-secret"
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	defer rt.Close()
	cfg, got := vaultyServer(t)
	p.Enqueue(providertest.CallTurn("", providertest.Call("c1", "vaulty__login", map[string]any{})), providertest.TextTurn("in"))
	cp := toolParams(p, "s1", t.TempDir())
	cp.MCPServers = []protocol.MCPServer{cfg}
	cp.ApprovalAllowlist = []string{protocol.MCPServerPattern("vaulty")}
	run := startChat(t, rt, cp)

	var card, vault protocol.ClarifyData
	run.waitFor(protocol.EvClarify, 1, &card)
	if card.Kind != protocol.ClarifyKindClarify || len(card.Questions) != 1 || !strings.Contains(card.Questions[0].Question, "User name") ||
		strings.Contains(card.Questions[0].Question, "Password") {
		t.Fatalf("clarify card: %+v", card)
	}
	clarifyAnswer(t, rt, "s1", card.ClarifyID, "ada")
	run.waitFor(protocol.EvClarify, 2, &vault)
	if vault.Kind != protocol.ClarifyKindVault || !regexp.MustCompile(`^MCP_VAULTY_PASSWORD_[0-9A-F]{32}$`).MatchString(vault.Name) || vault.SavedHint != "vault:"+vault.Name ||
		!strings.Contains(vault.Question, "The MCP server vaulty asks for a secret: Password (Your vault password)") {
		t.Fatalf("vault card: %+v", vault)
	}
	if ok, err := respond(rt, "s1", vault.ClarifyID, `{"value":"`+secret+`"}`); !ok || err != nil {
		t.Fatalf("vault answer: %v %v", ok, err)
	}
	res := run.mustResult()
	if sent := <-got; sent["user"] != "ada" || sent["password"] != secret {
		t.Fatalf("the server got %v", sent)
	}
	text := toolText(res)
	if !strings.Contains(text, "accept: logged in as ada with") || strings.Contains(text, secret) {
		t.Fatalf("the model read %q", text)
	}
	for _, f := range run.list() {
		if strings.Contains(string(f.data), secret) {
			t.Fatalf("the %s frame holds the secret: %s", f.event, f.data)
		}
	}
	for _, r := range p.Requests() {
		if strings.Contains(string(r.Body), secret) {
			t.Fatalf("a model request holds the secret: %s", r.Body)
		}
	}
}

// Two servers' secret fields never share a vault name, so "Use saved" never offers the
// secret one server was given to another: names that fold to the same readable part
// (case, '-' and '_', the separator between server and field) differ by their suffix,
// and a name is the same every time (a saved secret is found again).
func TestVaultNamesOfDifferentServersDiffer(t *testing.T) {
	pairs := [][2]string{{"a", "b_token"}, {"a_b", "token"}, {"gh-x", "token"}, {"gh_x", "token"}, {"Foo", "key"}, {"foo", "key"}, {"foo", "KEY"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		n := vaultName(p[0], p[1])
		if !regexp.MustCompile(`^[A-Z0-9_]{1,128}$`).MatchString(n) {
			t.Errorf("vaultName(%q, %q) = %q: not [A-Z0-9_], at most 128", p[0], p[1], n)
		}
		if q, dup := seen[n]; dup {
			t.Errorf("vaultName(%q, %q) = vaultName(%q, %q) = %q", p[0], p[1], q[0], q[1], n)
		}
		seen[n] = p
		if again := vaultName(p[0], p[1]); again != n {
			t.Errorf("vaultName(%q, %q) changed: %q then %q", p[0], p[1], n, again)
		}
	}
	if long := vaultName(strings.Repeat("s", 32), strings.Repeat("f", 200)); len(long) != 128 {
		t.Errorf("a long field's name is %d characters, want 128", len(long))
	}
}

// TestMCPSamplingPastTheTurnsBudgetIsAsked: YOLO (like a session grant) lets a server's
// sampling requests through without asking only maxAutoSamples times in a turn. A
// server that keeps asking inside one tool call gets a card for each further request,
// offering once or deny only, which turning YOLO on again does not release, and an
// answer "session" does not grant; a denial is the server's error and the model is not
// asked.
func TestMCPSamplingPastTheTurnsBudgetIsAsked(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	defer rt.Close()
	const asks = maxAutoSamples + 2
	srv := sdk.NewServer(&sdk.Implementation{Name: "looper", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "loop", Description: "Samples again and again."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		var out []string
		for i := range asks {
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: fmt.Sprintf("request %d", i+1)}}}})
			if err != nil {
				out = append(out, fmt.Sprintf("%d: error %v", i+1, err))
				continue
			}
			tc, _ := res.Content.(*sdk.TextContent)
			out = append(out, fmt.Sprintf("%d: %s", i+1, tc.Text))
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(out, "\n")}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close) // after the runtime's Close, which ends the client's standing stream
	turns := []providertest.Turn{providertest.CallTurn("", providertest.Call("c1", "looper__loop", map[string]any{}))}
	for i := range maxAutoSamples + 1 {
		turns = append(turns, providertest.TextTurn(fmt.Sprintf("answer %d", i+1)))
	}
	p.Enqueue(append(turns, providertest.TextTurn("done"))...)
	cp := toolParams(p, "s1", t.TempDir())
	cp.MCPServers = []protocol.MCPServer{{Name: "looper", Transport: protocol.MCPTransportHTTP, URL: hs.URL}}
	cp.Yolo = true
	run := startChat(t, rt, cp)

	var ap protocol.ApprovalData
	run.waitFor(protocol.EvApproval, 1, &ap)
	if ap.Pattern != "mcp-sampling:looper" || strings.Join(ap.Choices, ",") != "once,deny" ||
		!strings.Contains(ap.Description, fmt.Sprintf("request %d", maxAutoSamples+1)) || !strings.Contains(ap.Description, "without asking") {
		t.Fatalf("the first request past the budget: %+v", ap)
	}
	if res, err := rt.ApprovalYolo(protocol.ApprovalYoloParams{SessionID: "s1", Enabled: true}); err != nil || res.Released != 0 {
		t.Fatalf("YOLO released the card past the budget: %+v %v", res, err)
	}
	// "session" (which the host refuses on this card) counts as once: no grant is taken.
	if res, _ := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap.ApprovalID, Choice: protocol.ChoiceSession}); !res.OK {
		t.Fatal("approval not settled")
	}
	var ap2 protocol.ApprovalData
	run.waitFor(protocol.EvApproval, 2, &ap2)
	if !strings.Contains(ap2.Description, fmt.Sprintf("request %d", asks)) || strings.Join(ap2.Choices, ",") != "once,deny" {
		t.Fatalf("the second request past the budget: %+v", ap2)
	}
	if res, _ := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ap2.ApprovalID, Choice: protocol.ChoiceDeny}); !res.OK {
		t.Fatal("approval not settled")
	}
	got := toolText(run.mustResult())
	for i := 1; i <= maxAutoSamples+1; i++ {
		if !strings.Contains(got, fmt.Sprintf("%d: answer %d\n", i, i)) {
			t.Errorf("request %d was not answered by the model: %s", i, got)
		}
	}
	if !strings.Contains(got, fmt.Sprintf("%d: error", asks)) || !strings.Contains(got, "sampling refused: the user did not allow it") {
		t.Errorf("the denied request: %s", got)
	}
	var auto int
	for _, f := range run.of(protocol.EvApprovalAuto) {
		var a protocol.ApprovalAutoData
		json.Unmarshal(f, &a)
		if a.Pattern == "mcp-sampling:looper" {
			auto++
		}
	}
	if auto != maxAutoSamples {
		t.Errorf("%d sampling requests let through without asking, want %d", auto, maxAutoSamples)
	}
	if n := len(p.Requests()); n != 1+maxAutoSamples+1+1 {
		t.Errorf("%d model requests, want %d (the step, %d samplings, the end)", n, maxAutoSamples+3, maxAutoSamples+1)
	}
}
