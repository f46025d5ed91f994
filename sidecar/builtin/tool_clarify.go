package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"talaria/sidecar/protocol"
)

// clarifyTool is the clarify tool: it asks the user one to five questions and waits for the answers.
type clarifyTool struct{}

// Def is the clarify tool's definition.
func (clarifyTool) Def() ToolDef {
	return ToolDef{
		Name: "clarify", Toolset: ToolsetClarify,
		Description: "Ask the user one to five questions and wait for the answers. Each question may offer up to 4 choices " +
			"(the user may still answer in their own words) and may allow several choices. Use it when you cannot go on " +
			"without the user's decision; do not ask what you can find out yourself.",
		Parameters: `{"type":"object","properties":{
"questions":{"type":"array","minItems":1,"maxItems":5,"items":{"type":"object","properties":{
"question":{"type":"string"},
"choices":{"type":"array","maxItems":4,"items":{"type":"string"}},
"multi_select":{"type":"boolean","description":"Several choices may be picked (default false)."}
},"required":["question"]}}
},"required":["questions"],"additionalProperties":false}`,
	}
}

// KeyArg is the argument the clarify card shows in its title.
func (clarifyTool) KeyArg(args map[string]any) string {
	if qs, ok := args["questions"].([]any); ok && len(qs) > 0 {
		if q, ok := qs[0].(map[string]any); ok {
			s, _ := q["question"].(string)
			return s
		}
	}
	return ""
}

func (clarifyTool) run(ctx context.Context, t *turn, raw []byte) toolResult {
	var a clarifyArgs
	if err := decodeArgs(raw, &a); err != nil {
		return errResult("bad arguments for clarify: %v", err)
	}
	return t.clarify(ctx, a)
}

// clarifyArgs are the clarify tool's arguments; a single question given at the top
// level (question, choices, multi_select) is accepted too.
type clarifyArgs struct {
	Questions   []protocol.ClarifyQuestion `json:"questions"`
	Question    string                     `json:"question"`
	Choices     []string                   `json:"choices"`
	MultiSelect bool                       `json:"multi_select"`
}

func (t *turn) clarify(ctx context.Context, a clarifyArgs) toolResult {
	qs := a.Questions
	if len(qs) == 0 && strings.TrimSpace(a.Question) != "" {
		qs = []protocol.ClarifyQuestion{{Question: a.Question, Choices: a.Choices, MultiSelect: a.MultiSelect}}
	}
	if len(qs) < 1 || len(qs) > 5 {
		return errResult("clarify takes 1 to 5 questions, not %d", len(qs))
	}
	for i := range qs {
		q := &qs[i]
		q.Question = strings.TrimSpace(q.Question)
		if q.Question == "" {
			return errResult("question %d is empty", i+1)
		}
		if len(q.Question) > 4000 {
			return errResult("question %d is longer than 4000 bytes", i+1)
		}
		if len(q.Choices) > 4 {
			return errResult("question %d has %d choices; at most 4 are shown (the user can always answer in their own words)", i+1, len(q.Choices))
		}
		if q.Choices == nil {
			q.Choices = []string{}
		}
		for j, c := range q.Choices {
			if strings.TrimSpace(c) == "" || len(c) > 500 {
				return errResult("choice %d of question %d is empty or longer than 500 bytes", j+1, i+1)
			}
		}
	}
	w := &waiter{id: newID("cl_"), sessionID: t.p.SessionID, kind: kindClarify, questions: len(qs), ch: make(chan answer, 1)}
	t.r.park(w, "", nil)
	red := t.r.redactor()
	frame := protocol.ClarifyData{
		ClarifyID: w.id, Kind: protocol.ClarifyKindClarify,
		Question: qs[0].Question, Choices: qs[0].Choices, MultiSelect: qs[0].MultiSelect,
		Questions: qs, TimeoutS: int(t.clarifyTimeout / time.Second),
	}
	if !red.Empty() {
		raw := cleanJSON(frame, red, 0)
		json.Unmarshal(raw, &frame) //nolint:errcheck // it was just encoded
	}
	t.send(protocol.EvClarify, frame)
	t.log.Info("clarify asked", "clarify_id", w.id, "questions", len(qs))
	ans, reason := t.wait(ctx, w, t.clarifyTimeout)
	t.send(protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: w.id, Reason: reason})
	t.log.Info("clarify resolved", "clarify_id", w.id, "reason", reason)
	switch reason {
	case protocol.ResolvedAnswered:
		var answers []any
		if json.Unmarshal(ans.response, &answers) != nil || answers == nil {
			msg := "The user dismissed the question without answering."
			return toolResult{value: map[string]any{"answered": false, "message": msg}, preview: msg}
		}
		type qa struct {
			Question string `json:"question"`
			Answer   any    `json:"answer"`
		}
		out := make([]qa, len(qs))
		var sb strings.Builder
		for i := range qs {
			out[i] = qa{Question: qs[i].Question, Answer: answers[i]}
			fmt.Fprintf(&sb, "%s\n→ %v\n", qs[i].Question, answers[i])
		}
		return toolResult{value: map[string]any{"answered": true, "answers": out}, preview: sb.String()}
	case protocol.ResolvedTimeout:
		msg := fmt.Sprintf("The user did not answer within %d seconds. Go on with your best judgement, or end your turn and ask in your answer.", int(t.clarifyTimeout/time.Second))
		return toolResult{value: map[string]any{"answered": false, "message": msg}, preview: msg}
	}
	msg := "interrupted: the turn was stopped while the question waited for an answer."
	return toolResult{value: map[string]any{"answered": false, "error": msg}, preview: msg}
}
