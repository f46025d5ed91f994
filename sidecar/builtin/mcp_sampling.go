//lint:file-ignore SA1019 sampling is deprecated from MCP 2026-07-28 (SEP-2577) but still served for the servers that use it (issue 26)

package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
)

// Sampling (sampling/createMessage) during an MCP tool call: the server's prompt is
// shown on an approval card (kind mcp, tool "sampling", the server's name, its system
// prompt and messages as the card's arguments); once allowed (once, or for the rest of
// the session: the pattern mcp-sampling:<server>, never covered by a grant of the
// server's tools) the chat's configured model answers it, without tools, and the text
// goes back to the server. A denial, no answer in time or a stopped turn is an error to
// the server. Only text is sampled: an image or audio message is refused. A grant or
// YOLO lets at most maxAutoSamples requests of a turn through without asking; past
// that each one is asked, once or deny, so a server looping inside a tool call cannot
// spend the chat's model unseen.

// Bounds of a sampling request.
const (
	maxSampleMessages = 50
	maxSampleTokens   = 8192            // what the model may answer, whatever the server asks
	maxSampleText     = 64 << 10        // all the prompt's text, in bytes
	sampleTimeout     = 5 * time.Minute // the model's whole answer
	// maxAutoSamples is how many sampling requests of one turn a session grant or YOLO
	// allows without asking (each is up to maxSampleTokens of the chat's paid model).
	maxAutoSamples = 10
)

// samplingOnceChoices are the answers of a sampling approval past the turn's budget:
// a grant would not let the next one through either.
var samplingOnceChoices = []string{protocol.ChoiceOnce, protocol.ChoiceDeny}

// samplingChoices are the answers a sampling approval offers: no "always" (the host's
// allowlist) and no grant of the server's tools covers it.
var samplingChoices = []string{protocol.ChoiceOnce, protocol.ChoiceSession, protocol.ChoiceDeny}

// SamplingPattern is the approval pattern of a server's sampling requests.
func SamplingPattern(server string) string { return "mcp-sampling:" + server }

// CreateMessage asks the user, then samples the chat's model. Errors: the user's
// refusal (or no answer in time), a prompt that is not text, the model's failure, or
// ctx's error; the server gets each as an error.
func (a mcpAsker) CreateMessage(ctx context.Context, server string, req *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	t := a.t
	if req == nil || len(req.Messages) == 0 {
		return nil, errors.New("sampling refused: the request has no messages")
	}
	if len(req.Messages) > maxSampleMessages {
		return nil, fmt.Errorf("sampling refused: %d messages; at most %d are sampled", len(req.Messages), maxSampleMessages)
	}
	msgs := make([]wireMessage, 0, len(req.Messages)+1)
	shown := make([]map[string]any, 0, len(req.Messages))
	total := len(req.SystemPrompt)
	if sp := strings.TrimSpace(req.SystemPrompt); sp != "" {
		msgs = append(msgs, wireMessage{Role: "system", Content: sp})
	}
	for i, m := range req.Messages {
		tc, ok := m.Content.(*sdk.TextContent)
		if !ok || tc == nil {
			return nil, fmt.Errorf("sampling refused: message %d is not text (only text is sampled)", i+1)
		}
		role := string(m.Role)
		if role != "user" && role != "assistant" {
			return nil, fmt.Errorf("sampling refused: message %d has the role %q (user or assistant)", i+1, role)
		}
		total += len(tc.Text)
		msgs = append(msgs, wireMessage{Role: role, Content: tc.Text})
		shown = append(shown, map[string]any{"role": role, "text": tc.Text})
	}
	if total > maxSampleText {
		return nil, fmt.Errorf("sampling refused: the prompt is %d bytes; at most %d are sampled", total, maxSampleText)
	}
	maxTokens := int(min(max(req.MaxTokens, 1), maxSampleTokens))
	if ok, msg := t.approveSampling(ctx, server, req.SystemPrompt, shown, maxTokens); !ok {
		return nil, errors.New(msg)
	}
	text, stop, err := t.sample(ctx, msgs, maxTokens)
	if err != nil {
		t.log.Info("MCP sampling failed", "server", server, "err", err)
		return nil, fmt.Errorf("sampling failed: %s", t.r.redactor().String(err.Error()))
	}
	t.log.Info("MCP sampling answered", "server", server, "bytes", len(text), "stop", stop)
	return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: text}, Model: t.ep.model, Role: "assistant", StopReason: stop}, nil
}

// approveSampling shows the sampling approval card and waits for its answer; it
// returns false and the message the server gets when not allowed.
func (t *turn) approveSampling(ctx context.Context, server, system string, shown []map[string]any, maxTokens int) (bool, string) {
	key := SamplingPattern(server)
	ref := &protocol.MCPToolRef{Server: server, Tool: "sampling", Title: "Ask the chat's model"}
	// A share of the budget is taken before asking (concurrent requests cannot all see
	// it unspent) and given back when this one is asked after all.
	over := t.autoSamples.Add(1) > maxAutoSamples
	w := &waiter{id: newID("ap_"), sessionID: t.p.SessionID, kind: kindApproval, key: key, onceOnly: over, mustAsk: over, ch: make(chan answer, 1)}
	allowed := t.r.park(w, key, t.allow)
	if !allowed && !over {
		t.autoSamples.Add(-1)
	}
	if allowed {
		decision := protocol.AutoAllowed
		if w.allowedBy == "yolo" {
			decision = protocol.AutoYolo
		}
		t.send(protocol.EvApprovalAuto, protocol.ApprovalAutoData{TID: t.callID, Command: server + " · sampling",
			Pattern: key, Decision: decision, DecidedBy: w.allowedBy, Kind: protocol.ApprovalKindMCP, MCP: ref})
		return true, ""
	}
	red := t.r.redactor()
	args := map[string]any{"messages": shown, "max_tokens": maxTokens}
	if system != "" {
		args["system_prompt"] = system
	}
	shownArgs, _ := walkStrings(args, red, maxArgFrame).(map[string]any)
	var last string
	if n := len(shown); n > 0 {
		last, _ = shown[n-1]["text"].(string)
	}
	desc := fmt.Sprintf("The MCP server %s asks the chat's model (%s) to answer: %s", server, t.ep.model, strings.TrimSpace(last))
	choices := samplingChoices
	if over {
		desc = fmt.Sprintf("The MCP server %s has already had %d answers of the chat's model in this turn without asking; this one is asked. ", server, maxAutoSamples) + desc
		choices = samplingOnceChoices
	}
	desc, _ = tools.Cap(red.String(desc), 1000)
	t.send(protocol.EvApproval, protocol.ApprovalData{
		ApprovalID: w.id, Kind: protocol.ApprovalKindMCP, MCP: ref, Args: shownArgs,
		Command: server + " · sampling (uses the chat's model)", Description: desc, Pattern: key, Choices: choices,
		TimeoutS: int(t.approvalTimeout / time.Second),
	})
	t.log.Info("sampling approval requested", "approval_id", w.id, "pattern", key)
	ans, reason := t.wait(ctx, w, t.approvalTimeout)
	resolved := protocol.ResolvedData{ApprovalID: w.id, Reason: reason}
	if reason == protocol.ResolvedAnswered {
		resolved.Choice = ans.choice
	}
	t.send(protocol.EvApprovalResolved, resolved)
	t.log.Info("sampling approval resolved", "approval_id", w.id, "reason", reason, "choice", ans.choice)
	switch reason {
	case protocol.ResolvedYolo:
		return true, ""
	case protocol.ResolvedAnswered:
		if ans.choice == protocol.ChoiceDeny {
			return false, "sampling refused: the user did not allow it"
		}
		return true, ""
	case protocol.ResolvedTimeout:
		return false, fmt.Sprintf("sampling refused: nobody answered the approval request within %d seconds", int(t.approvalTimeout/time.Second))
	}
	return false, "sampling refused: the turn was stopped"
}

// sample asks the chat's model for one answer to msgs, without tools, and returns its
// text and MCP stop reason (endTurn, maxTokens).
func (t *turn) sample(ctx context.Context, msgs []wireMessage, maxTokens int) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	req := &chatRequest{Model: t.ep.model, Messages: msgs, Stream: true}
	applyOptions(req, t.ep.dialect, maxTokens, t.p.ReasoningEffort)
	resp, err := t.r.post(ctx, t.ep, req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	stop := func(finish string) string {
		if finish == "length" {
			return "maxTokens"
		}
		return "endTurn"
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		var c completionResponse
		if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&c); err != nil || len(c.Choices) == 0 {
			return "", "", fmt.Errorf("%s sent no completion", t.ep.name)
		}
		u := c.Usage
		if u == nil && c.XGroq != nil {
			u = c.XGroq.Usage
		}
		t.addSamplingUsage(u)
		return string(c.Choices[0].Message.Content), stop(c.Choices[0].FinishReason), nil
	}
	var sb strings.Builder
	finish := ""
	var usage *wireUsage
	// What the answer cost counts in the chat's usage, however the sampling ends.
	defer func() { t.addSamplingUsage(usage) }()
	sse := newSSEReader(resp.Body)
	for {
		data, err := sse.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return "", "", ctx.Err()
			}
			return "", "", fmt.Errorf("the connection to %s broke: %v", t.ep.name, err)
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			break
		}
		if data == "" || sse.Event == "error" {
			if sse.Event == "error" {
				return "", "", fmt.Errorf("%s failed: %s", t.ep.name, data)
			}
			continue
		}
		var c streamChunk
		if json.Unmarshal([]byte(data), &c) != nil {
			continue
		}
		for _, ch := range c.Choices {
			sb.WriteString(string(ch.Delta.Content))
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
			if ch.Usage != nil {
				usage = ch.Usage
			}
		}
		if c.Usage != nil {
			usage = c.Usage
		} else if c.XGroq != nil && c.XGroq.Usage != nil {
			usage = c.XGroq.Usage
		}
		if sb.Len() > 1<<20 {
			break
		}
	}
	return sb.String(), stop(finish), nil
}

// addSamplingUsage adds what a sampling request's answer cost (the provider's
// counters; nil when it sent none) to the turn's usage, and sends the usage frame: the
// tokens a server had the chat's model spend count in the chat's usage and cost like
// the turn's own (they do not fill the chat's context, so the context figures stay).
// Sampling runs during tool calls, which may run side by side: t.usageMu orders them.
func (t *turn) addSamplingUsage(u *wireUsage) {
	if u == nil {
		return
	}
	t.usageMu.Lock()
	t.usage = t.usage.Add(u.usage())
	total := t.usage
	t.usageMu.Unlock()
	t.send(protocol.EvUsage, total)
}
