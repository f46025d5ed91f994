package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/gate"
	"talaria/sidecar/protocol"
)

// Elicitation: an agent's elicitation/create (ACP, unstable in v0.13 of the SDK; form
// mode only, which is all Talaria advertises) becomes a clarify card of the running
// turn: one question per field of the requested schema (at most maxElicitFields), an
// enum's values (at most 4) or yes/no for a boolean as its choices, an array of enum
// values as a multi-select. clarify.respond's answers are converted to the fields'
// types and sent back as accept; no answer in time, a stopped turn or a form Talaria
// cannot show is cancel, with a warning saying why.

const (
	maxElicitFields  = 5 // a clarify card's questions (protocol.ClarifyData)
	maxElicitChoices = 4 // a question's choices
)

// elicitField is one field of a requested schema, in the order shown.
type elicitField struct {
	name, typ string
	multi     bool
	choices   []string
}

// elicitForm turns a requested schema into the clarify's questions. It returns why it
// cannot ("" when it can): more fields than a card holds, a field that asks for a
// secret (gate.SecretField), a field that is not a string, number, integer, boolean or
// an array of enum strings.
func elicitForm(message string, schema sdk.UnstableElicitationSchema) ([]elicitField, []protocol.ClarifyQuestion, string) {
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	// Required fields first, each group by name (a JSON object has no order the SDK keeps).
	slices.SortFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(schema.Required, a), slices.Contains(schema.Required, b)
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	if len(names) == 0 {
		return nil, []protocol.ClarifyQuestion{{Question: message, Choices: []string{}}}, ""
	}
	if len(names) > maxElicitFields {
		return nil, nil, fmt.Sprintf("it asks for %d fields; a question card holds %d", len(names), maxElicitFields)
	}
	var fields []elicitField
	var qs []protocol.ClarifyQuestion
	for i, n := range names {
		prop, _ := schema.Properties[n].(map[string]any)
		f := elicitField{name: n, typ: str(prop["type"])}
		if writeOnly, _ := prop["writeOnly"].(bool); gate.SecretField(n, str(prop["title"]), str(prop["description"]), f.typ, str(prop["format"]), writeOnly) {
			return nil, nil, fmt.Sprintf("its field %q asks for a secret, which Talaria does not take on a question card (the chat keeps its answers); give the agent its key through its settings in Settings, Agents (a secret variable) or its own sign-in", firstNonEmpty(str(prop["title"]), n))
		}
		label := firstNonEmpty(str(prop["title"]), n)
		if d := str(prop["description"]); d != "" {
			label += ": " + d
		}
		switch f.typ {
		case "string", "number", "integer":
			f.choices = enumStrings(prop["enum"])
			if len(f.choices) == 0 {
				f.choices = enumStrings(oneOfConsts(prop["oneOf"]))
			}
		case "boolean":
			f.choices = []string{"yes", "no"}
		case "array":
			items, _ := prop["items"].(map[string]any)
			f.choices = enumStrings(items["enum"])
			if len(f.choices) == 0 {
				f.choices = enumStrings(oneOfConsts(items["anyOf"]))
			}
			if len(f.choices) == 0 {
				return nil, nil, fmt.Sprintf("its field %q is a list without choices", n)
			}
			f.multi = true
		default:
			return nil, nil, fmt.Sprintf("its field %q is of type %q", n, f.typ)
		}
		if len(f.choices) > maxElicitChoices {
			if f.multi {
				return nil, nil, fmt.Sprintf("its field %q offers %d choices; a question holds %d", n, len(f.choices), maxElicitChoices)
			}
			f.choices = nil // typed in instead
		}
		q := label
		if i == 0 && message != "" {
			q = message + "\n\n" + label
		}
		qs = append(qs, protocol.ClarifyQuestion{Question: q, Choices: append([]string{}, f.choices...), MultiSelect: f.multi})
		fields = append(fields, f)
	}
	return fields, qs, ""
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func enumStrings(v any) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, e := range list {
		switch x := e.(type) {
		case string:
			out = append(out, x)
		case float64:
			out = append(out, strconv.FormatFloat(x, 'f', -1, 64))
		}
	}
	return out
}

// oneOfConsts reads [{const: v, title: t}, ...] (JSON Schema's titled enum) as [v, ...].
func oneOfConsts(v any) any {
	list, _ := v.([]any)
	var out []any
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m["const"] != nil {
			out = append(out, m["const"])
		}
	}
	return out
}

// elicitContent converts clarify.respond's answers (one per question: a string, or a
// list for a multi-select) into the fields' values. An answer that does not fit its
// field is an error naming it.
func elicitContent(fields []elicitField, response json.RawMessage) (map[string]any, error) {
	var answers []json.RawMessage
	if err := json.Unmarshal(response, &answers); err != nil || len(answers) != len(fields) {
		return nil, fmt.Errorf("clarify.respond needs one answer per question (%d)", len(fields))
	}
	out := map[string]any{}
	for i, f := range fields {
		if f.multi {
			var list []string
			if err := json.Unmarshal(answers[i], &list); err != nil {
				return nil, fmt.Errorf("the answer to %q must be a list", f.name)
			}
			out[f.name] = list
			continue
		}
		var s string
		if err := json.Unmarshal(answers[i], &s); err != nil {
			return nil, fmt.Errorf("the answer to %q must be a text", f.name)
		}
		s = strings.TrimSpace(s)
		switch f.typ {
		case "boolean":
			switch strings.ToLower(s) {
			case "yes", "true":
				out[f.name] = true
			case "no", "false":
				out[f.name] = false
			default:
				return nil, fmt.Errorf("the answer to %q must be yes or no", f.name)
			}
		case "integer":
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("the answer to %q must be a whole number", f.name)
			}
			out[f.name] = n
		case "number":
			n, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("the answer to %q must be a number", f.name)
			}
			out[f.name] = n
		default:
			out[f.name] = s
		}
	}
	return out, nil
}

// elicitTurn finds the turn an elicitation is for. The SDK's request names no session
// (ACP's elicitation is unstable), so it is the session named in _meta.sessionId when
// the agent gives one, else the one turn running on this agent; nil when there is none
// or several.
func (c *client) elicitTurn(meta map[string]any) *turn {
	if sid := str(meta["sessionId"]); sid != "" {
		_, t := c.route(sdk.SessionId(sid))
		return t
	}
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	var found *turn
	for _, ch := range c.r.chats {
		if ch.turn != nil && ch.gen == c.a.gen {
			if found != nil {
				return nil
			}
			found = ch.turn
		}
	}
	return found
}

// UnstableCreateElicitation serves elicitation/create (see Elicitation above).
func (c *client) UnstableCreateElicitation(ctx context.Context, req sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	cancel := sdk.NewUnstableCreateElicitationResponseCancel()
	if req.Form == nil {
		c.r.log.Info("an elicitation other than a form: cancelled")
		return cancel, nil
	}
	t := c.elicitTurn(req.Form.Meta)
	if t == nil {
		c.r.log.Info("elicitation outside a turn (or with several running): cancelled")
		return cancel, nil
	}
	return t.elicit(ctx, req.Form), nil
}

// UnstableCompleteElicitation takes elicitation/complete (URL mode, which Talaria does
// not advertise): nothing to do.
func (c *client) UnstableCompleteElicitation(ctx context.Context, n sdk.UnstableCompleteElicitationNotification) error {
	return nil
}

// elicit shows a form elicitation as the turn's clarify card and waits for its answer.
func (t *turn) elicit(ctx context.Context, form *sdk.UnstableCreateElicitationForm) sdk.UnstableCreateElicitationResponse {
	cancel := sdk.NewUnstableCreateElicitationResponseCancel()
	agent := t.a.name(t.r.opts.Agent)
	message := capString(form.Message, 4000)
	fields, qs, why := elicitForm(message, form.RequestedSchema)
	if why != "" {
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningFallback,
			Message: fmt.Sprintf("%s asked a question Talaria cannot show (%s); it was told the question was cancelled.", agent, why)})
		return cancel
	}
	w := &waiter{id: newID("cl_"), sessionID: t.p.SessionID, t: t, clarify: true, ch: make(chan answer, 1)}
	if len(fields) == 0 {
		// No fields: a message to acknowledge (accept) or not.
		qs[0].Choices = []string{"OK"}
	}
	if !t.r.park(w) {
		return cancel
	}
	timeout := time.Duration(t.p.ClarifyTimeoutS) * time.Second
	if timeout <= 0 {
		timeout = time.Hour
	}
	first := qs[0]
	t.send(protocol.EvClarify, protocol.ClarifyData{ClarifyID: w.id, Kind: protocol.ClarifyKindClarify, Question: first.Question,
		Choices: first.Choices, MultiSelect: first.MultiSelect, Questions: qs, TimeoutS: int(timeout / time.Second), Elicitation: true})
	t.r.log.Info("elicitation asked", "clarify_id", w.id, "fields", len(fields))
	for {
		a := t.r.wait(ctx, w, timeout)
		var resp sdk.UnstableCreateElicitationResponse
		switch {
		case a.reason != protocol.ResolvedAnswered:
			resp = cancel
		case string(a.response) == "null" || len(a.response) == 0 || elicitActionIs(a.response, protocol.ElicitDecline):
			resp = sdk.NewUnstableCreateElicitationResponseDecline()
		case elicitActionIs(a.response, protocol.ElicitCancel):
			resp = cancel
		case len(fields) == 0:
			resp = sdk.NewUnstableCreateElicitationResponseAccept()
		default:
			content, err := elicitContent(fields, a.response)
			if err != nil {
				// A value that does not fit its field: the card stays open, and is
				// parked again before its caller is told, so that an answer sent
				// right after the refusal finds it.
				parked := t.r.park(w)
				a.reply <- err
				if !parked {
					t.send(protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: w.id, Reason: protocol.ResolvedInterrupted})
					return cancel
				}
				continue
			}
			resp = sdk.NewUnstableCreateElicitationResponseAccept()
			resp.Accept.Content = content
		}
		if a.reply != nil {
			a.reply <- nil
		}
		t.send(protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: w.id, Reason: a.reason})
		return resp
	}
}

// respondClarify runs clarify.respond for an elicitation's card: ok false for an
// unknown or settled id; invalid_params for answers that do not fit the form (the
// card stays open).
func (r *Runtime) respondClarify(p protocol.ClarifyRespondParams) (protocol.OKResult, error) {
	r.mu.Lock()
	w := r.waiters[p.ClarifyID]
	r.mu.Unlock()
	if w == nil || !w.clarify || w.sessionID != p.SessionID {
		return protocol.OKResult{OK: false}, nil
	}
	reply := make(chan error, 1)
	if !r.settle(p.ClarifyID, answer{reason: protocol.ResolvedAnswered, response: p.Response, reply: reply}) {
		return protocol.OKResult{OK: false}, nil
	}
	select {
	case err := <-reply:
		if err != nil {
			return protocol.OKResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, err.Error())
		}
	case <-time.After(5 * time.Second):
	}
	return protocol.OKResult{OK: true}, nil
}

// elicitActionIs reports whether a card's response is {"action": action}: the user
// declined or cancelled the elicitation (protocol.ElicitDecline, ElicitCancel).
func elicitActionIs(raw json.RawMessage, action string) bool {
	var v struct {
		Action string `json:"action"`
	}
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &v) == nil && v.Action == action
}
