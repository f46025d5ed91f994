package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/gate"
	"talaria/sidecar/protocol"
)

// An MCP server's requests during one of the turn's tool calls (mcp.Requests):
//
// Elicitation (elicitation/create, form mode) becomes clarify cards in the chat: one
// question per field of the requested schema (at most 5 a card, several cards in turn
// for more), its title, description and choices (an enum of up to 4 values, or yes/no
// for a boolean). A field that looks secret (its name or title says password, token,
// secret, API key ..., or format password, or writeOnly) is asked on its own vault card
// instead: its value goes to the server and nowhere else (no clarify answer, so not
// SQLite, the journal or a frame) and is redacted from everything the turn shows. A
// dismissed card is the MCP action decline; no answer (timeout) is cancel; an answer the
// schema refuses (not a number, not one of the choices) is cancel too. URL mode is
// declined: nothing opens a link the server chose.
//
// Sampling (sampling/createMessage): see mcp_sampling.go.

// Bounds of an elicitation.
const (
	maxElicitFields    = 20 // fields of one requested schema
	maxElicitPerCard   = 5  // questions of one clarify card (protocol.ClarifyData)
	maxElicitChoices   = 4  // choices a question shows (protocol.ClarifyQuestion)
	maxElicitQuestion  = 4000
	maxElicitTextField = 500
)

// skipAnswer is the answer that leaves an optional field out (the clarify card wants
// an answer to every question).
const skipAnswer = "-"

// elicitField is one property of a requested schema.
type elicitField struct {
	name, title, desc string
	typ               string   // string, boolean, integer, number, array
	values            []string // enum values (const for titled enums)
	labels            []string // what the user sees of each value (titles), same length
	required, secret  bool
}

// mcpAsker answers the requests of a turn's MCP tool calls.
type mcpAsker struct{ t *turn }

// Elicit asks the user for the fields of req on clarify (and vault) cards.
func (a mcpAsker) Elicit(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	t := a.t
	if req == nil || req.Mode == "url" || req.URL != "" {
		t.log.Info("MCP elicitation declined: url mode", "server", server)
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	fields, err := elicitFields(req.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("elicitation refused: %w", err)
	}
	red := t.r.redactor()
	intro, _ := tools.Cap(fmt.Sprintf("The MCP server %s asks: %s", server, red.String(strings.TrimSpace(req.Message))), 1000)
	content := map[string]any{}
	var plain []elicitField
	for _, f := range fields {
		if !f.secret {
			plain = append(plain, f)
		}
	}
	for start := 0; start < len(plain); start += maxElicitPerCard {
		batch := plain[start:min(start+maxElicitPerCard, len(plain))]
		answers, reason, err := t.askFields(ctx, intro, batch)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			return &sdk.ElicitResult{Action: reason}, nil
		}
		for i, f := range batch {
			v, ok, err := f.value(answers[i])
			if err != nil {
				t.log.Info("MCP elicitation cancelled: an answer the schema refuses", "server", server, "field", f.name, "err", err)
				return &sdk.ElicitResult{Action: "cancel"}, nil
			}
			if ok {
				content[f.name] = v
			}
		}
	}
	for _, f := range fields {
		if !f.secret {
			continue
		}
		v, reason, err := t.askSecretField(ctx, server, intro, f)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			return &sdk.ElicitResult{Action: reason}, nil
		}
		switch {
		case v == "":
		case f.typ == "integer" || f.typ == "number":
			// A PIN or a one-time code asked as a number goes to the server as one.
			n, ok, err := f.value(v)
			if err != nil || !ok {
				t.log.Info("MCP elicitation cancelled: a secret that is not a number", "server", server, "field", f.name)
				return &sdk.ElicitResult{Action: "cancel"}, nil
			}
			content[f.name] = n
		default:
			content[f.name] = v
		}
	}
	for _, f := range fields {
		if _, ok := content[f.name]; f.required && !ok {
			t.log.Info("MCP elicitation cancelled: a required field left empty", "server", server, "field", f.name)
			return &sdk.ElicitResult{Action: "cancel"}, nil
		}
	}
	t.log.Info("MCP elicitation answered", "server", server, "fields", len(content))
	return &sdk.ElicitResult{Action: "accept", Content: content}, nil
}

// askFields shows one clarify card with a question per field and returns the answers
// (strings, or string arrays for a multi-select), or the MCP action when there are
// none: "decline" (declined, or dismissed with null) or "cancel" (cancelled, or no
// answer in time). Errors: ctx's, when the
// turn was stopped.
func (t *turn) askFields(ctx context.Context, intro string, fields []elicitField) ([]any, string, error) {
	qs := make([]protocol.ClarifyQuestion, len(fields))
	for i, f := range fields {
		qs[i] = f.question()
	}
	q0, _ := tools.Cap(intro+"\n\n"+qs[0].Question, maxElicitQuestion)
	qs[0].Question = q0
	w := &waiter{id: newID("cl_"), sessionID: t.p.SessionID, kind: kindClarify, questions: len(qs), elicit: true, ch: make(chan answer, 1)}
	t.r.park(w, "", nil)
	t.send(protocol.EvClarify, protocol.ClarifyData{
		ClarifyID: w.id, Kind: protocol.ClarifyKindClarify, Elicitation: true,
		Question: qs[0].Question, Choices: qs[0].Choices, MultiSelect: qs[0].MultiSelect,
		Questions: qs, TimeoutS: int(t.clarifyTimeout / time.Second),
	})
	t.log.Info("MCP elicitation asked", "clarify_id", w.id, "questions", len(qs))
	ans, reason := t.wait(ctx, w, t.clarifyTimeout)
	t.send(protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: w.id, Reason: reason})
	t.log.Info("MCP elicitation resolved", "clarify_id", w.id, "reason", reason)
	switch reason {
	case protocol.ResolvedAnswered:
		if ans.action != "" {
			return nil, ans.action, nil
		}
		var answers []any
		if json.Unmarshal(ans.response, &answers) != nil || len(answers) != len(fields) {
			return nil, "decline", nil
		}
		return answers, "", nil
	case protocol.ResolvedTimeout:
		return nil, "cancel", nil
	}
	return nil, "", fmt.Errorf("the turn was stopped while the user was asked: %w", context.Canceled)
}

// askSecretField asks for one secret field on a vault card. The value is added to what
// the turn redacts before the card resolves. It returns the value ("" when declined:
// reason decline) or the MCP action ("cancel": no answer in time).
func (t *turn) askSecretField(ctx context.Context, server, intro string, f elicitField) (string, string, error) {
	w := &waiter{id: newID("cl_"), sessionID: t.p.SessionID, kind: kindVault, ch: make(chan answer, 1)}
	t.r.park(w, "", nil)
	name := vaultName(server, f.name)
	reason, _ := tools.Cap(intro+"\n\n"+f.label(), 1000)
	t.send(protocol.EvClarify, protocol.ClarifyData{
		ClarifyID: w.id, Kind: protocol.ClarifyKindVault,
		Question: fmt.Sprintf("The MCP server %s asks for a secret: %s.", server, f.label()), Choices: []string{}, Questions: []protocol.ClarifyQuestion{},
		Name: name, Reason: reason, SavedHint: "vault:" + name, TimeoutS: int(t.clarifyTimeout / time.Second),
		AgentNotice: "The value goes to the MCP server " + server + " (not to the model).",
	})
	t.log.Info("MCP elicitation asked for a secret", "clarify_id", w.id, "name", name)
	ans, why := t.wait(ctx, w, t.clarifyTimeout)
	provided := why == protocol.ResolvedAnswered && ans.value != nil
	if provided {
		// Known to the redactor before the resolved frame goes out.
		t.r.learnSecretValue(*ans.value)
	}
	t.send(protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: w.id, Reason: why})
	t.log.Info("MCP elicitation secret resolved", "clarify_id", w.id, "name", name, "reason", why, "provided", provided)
	switch {
	case provided:
		return *ans.value, "", nil
	case why == protocol.ResolvedAnswered:
		return "", "decline", nil
	case why == protocol.ResolvedTimeout:
		return "", "cancel", nil
	}
	return "", "", fmt.Errorf("the turn was stopped while the user was asked: %w", context.Canceled)
}

// learnSecretValue adds one value to those every output is redacted of.
func (r *Runtime) learnSecretValue(v string) {
	if len(strings.TrimSpace(v)) < 4 {
		return // too short to redact without mangling text; it is never shown anyway
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.mcpSecrets[v] {
		r.mcpSecrets[v] = true
		r.rebuildRedactorLocked()
	}
}

var vaultNameUnsafe = regexp.MustCompile(`[^A-Z0-9_]+`)

// vaultName is the vault card's name of a secret field:
// MCP_<SERVER>_<FIELD>_<32 hex digits>, upper case, [A-Z0-9_] only, at most 128
// characters (the keyring account the host may offer is vault:<name>). The readable
// part folds case and '-' into '_' and so is shared by different pairs (server "a"
// field "b_token" and server "a_b" field "token"; "gh-x" and "gh_x"; "Foo" and "foo"):
// the suffix, 128 bits of SHA-256 over the exact server name and field (a server picks
// its field names, so fewer bits could be searched for a match), keeps each pair's
// saved secret its own, so "Use saved" never offers one server's secret to
// another.
func vaultName(server, field string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + field))
	suffix := "_" + strings.ToUpper(hex.EncodeToString(sum[:16]))
	n := vaultNameUnsafe.ReplaceAllString(strings.ToUpper("MCP_"+server+"_"+field), "_")
	if len(n) > 128-len(suffix) {
		n = n[:128-len(suffix)]
	}
	return n + suffix
}

// elicitFields reads a requested schema (a flat JSON schema object): required fields
// first, then by name. Errors: a schema that is not an object of properties, or has
// more than maxElicitFields.
func elicitFields(schema any) ([]elicitField, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("its schema cannot be read: %v", err)
	}
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(b, &s); err != nil || len(s.Properties) == 0 {
		return nil, fmt.Errorf("its schema names no fields")
	}
	if len(s.Properties) > maxElicitFields {
		return nil, fmt.Errorf("its schema has %d fields; at most %d are asked", len(s.Properties), maxElicitFields)
	}
	var out []elicitField
	for name, p := range s.Properties {
		f := elicitField{name: name, required: slices.Contains(s.Required, name)}
		f.title, _ = p["title"].(string)
		f.desc, _ = p["description"].(string)
		f.typ, _ = p["type"].(string)
		format, _ := p["format"].(string)
		writeOnly, _ := p["writeOnly"].(bool)
		f.secret = gate.SecretField(name, f.title, f.desc, f.typ, format, writeOnly)
		f.values, f.labels = enumOf(p)
		if f.typ == "array" {
			if items, ok := p["items"].(map[string]any); ok {
				f.values, f.labels = enumOf(items)
			}
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b elicitField) int {
		if a.required != b.required {
			if a.required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return out, nil
}

// enumOf reads the choices of a property: enum (with the legacy enumNames as their
// labels), or oneOf/anyOf of {const, title}.
func enumOf(p map[string]any) (values, labels []string) {
	if e, ok := p["enum"].([]any); ok {
		names, _ := p["enumNames"].([]any)
		for i, v := range e {
			s := fmt.Sprint(v)
			values = append(values, s)
			l := s
			if i < len(names) {
				if n, ok := names[i].(string); ok && n != "" {
					l = n
				}
			}
			labels = append(labels, l)
		}
		return values, labels
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		alts, ok := p[k].([]any)
		if !ok {
			continue
		}
		for _, a := range alts {
			m, _ := a.(map[string]any)
			c, ok := m["const"]
			if !ok {
				continue
			}
			s := fmt.Sprint(c)
			l, _ := m["title"].(string)
			if l == "" {
				l = s
			}
			values, labels = append(values, s), append(labels, l)
		}
	}
	return values, labels
}

// label is what the user reads of a field: its title (or name) and description.
func (f elicitField) label() string {
	l := f.title
	if l == "" {
		l = f.name
	}
	if f.desc != "" && f.desc != l {
		l += " (" + f.desc + ")"
	}
	l, _ = tools.Cap(l, maxElicitTextField)
	return l
}

// question is the clarify question of a field.
func (f elicitField) question() protocol.ClarifyQuestion {
	q := protocol.ClarifyQuestion{Question: f.label(), Choices: []string{}}
	switch {
	case f.typ == "boolean":
		q.Choices = []string{"Yes", "No"}
	case len(f.values) > 0 && len(f.values) <= maxElicitChoices:
		q.Choices = slices.Clone(f.labels)
		q.MultiSelect = f.typ == "array"
	case len(f.values) > 0:
		q.Question += "\nOne of: " + strings.Join(f.labels, ", ")
		if f.typ == "array" {
			q.Question += " (several, separated by commas)"
		}
	case f.typ == "integer" || f.typ == "number":
		q.Question += "\nA number."
	}
	if !f.required {
		q.Question += "\n(Optional: answer " + skipAnswer + " to leave it out.)"
	}
	return q
}

// value converts an answer to the field's type; ok is false for an empty answer.
// Errors: an answer the field's type or choices refuse.
func (f elicitField) value(ans any) (any, bool, error) {
	var parts []string
	switch a := ans.(type) {
	case string:
		parts = []string{a}
		if f.typ == "array" {
			parts = strings.Split(a, ",")
		}
	case []any:
		for _, x := range a {
			s, _ := x.(string)
			parts = append(parts, s)
		}
	}
	var kept []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" && p != skipAnswer {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return nil, false, nil
	}
	choose := func(s string) (string, error) {
		if len(f.values) == 0 {
			return s, nil
		}
		for i := range f.values {
			if strings.EqualFold(s, f.labels[i]) || strings.EqualFold(s, f.values[i]) {
				return f.values[i], nil
			}
		}
		return "", fmt.Errorf("%q is not one of the choices", s)
	}
	one := strings.Join(kept, ", ")
	switch f.typ {
	case "array":
		var out []any
		for _, s := range kept {
			v, err := choose(s)
			if err != nil {
				return nil, false, err
			}
			out = append(out, v)
		}
		return out, true, nil
	case "boolean":
		switch strings.ToLower(one) {
		case "yes", "y", "true":
			return true, true, nil
		case "no", "n", "false":
			return false, true, nil
		}
		return nil, false, fmt.Errorf("%q is not yes or no", one)
	case "integer":
		n, err := strconv.ParseInt(one, 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("%q is not a whole number", one)
		}
		return n, true, nil
	case "number":
		n, err := strconv.ParseFloat(one, 64)
		if err != nil {
			return nil, false, fmt.Errorf("%q is not a number", one)
		}
		return n, true, nil
	}
	v, err := choose(one)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}
