package hermes

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"

	"talaria/sidecar/protocol"
)

// approval sends an approval frame with exactly the choices Hermes offers; reqID is
// dialect B's server request id (nil for dialect A's approval.request event, answered
// with approval.respond).
func (t *turn) approval(b *evApproval, reqID json.RawMessage) {
	t.seq++
	a := &approvalState{id: fmt.Sprintf("ap_%s_%d", shortID(t.streamID), t.seq), reqID: reqID, tid: t.openTool()}
	choices := slices.Clone(b.Choices)
	if len(choices) == 0 {
		// tui_gateway/server.py _emit_approval_request derives them the same way.
		switch {
		case b.SmartDenied:
			choices = []string{"once", "deny"}
		case b.AllowPermanent != nil && !*b.AllowPermanent:
			choices = []string{"once", "session", "deny"}
		default:
			choices = []string{"once", "session", "always", "deny"}
		}
	}
	a.choices = slices.DeleteFunc(choices, func(c string) bool {
		return c != protocol.ChoiceOnce && c != protocol.ChoiceSession && c != protocol.ChoiceAlways && c != protocol.ChoiceDeny
	})
	if !slices.Contains(a.choices, protocol.ChoiceDeny) {
		a.choices = append(a.choices, protocol.ChoiceDeny) // denying is always possible
	}
	t.approvals = append(t.approvals, a)
	pattern := b.PatternKey
	if pattern == "" && len(b.PatternKeys) > 0 {
		pattern = b.PatternKeys[0]
	}
	t.send(protocol.EvApproval, protocol.ApprovalData{ApprovalID: a.id, Command: capString(b.Command, 16<<10),
		Description: b.Description, Pattern: pattern, TimeoutS: int(t.approvalTimeout / time.Second), Choices: a.choices})
}

func (t *turn) resolveApproval(a *approvalState, reason, choice string) {
	if a.resolved {
		return
	}
	a.resolved = true
	t.send(protocol.EvApprovalResolved, protocol.ResolvedData{ApprovalID: a.id, Reason: reason, Choice: choice})
}

// prompt sends a clarify frame for a Hermes prompt: questions (*evClarify), or a vault
// card for a secret (*evSecret, an env var) or the sudo password (*evSudo). reqID is
// dialect B's server request id; nil for dialect A's events, answered by request_id.
func (t *turn) prompt(body any, reqID json.RawMessage) {
	t.seq++
	c := &clarifyState{id: fmt.Sprintf("cl_%s_%d", shortID(t.streamID), t.seq), reqID: reqID, tid: t.openTool()}
	data := protocol.ClarifyData{ClarifyID: c.id, Kind: protocol.ClarifyKindClarify, Choices: []string{}, Questions: []protocol.ClarifyQuestion{}}
	requestID := ""
	switch b := body.(type) {
	case *evClarify:
		c.kind, requestID = "clarify", b.RequestID
		clarifyCard(c, &data, b)
	case *evSecret:
		c.kind, requestID = "secret", b.RequestID
		secretCard(&data, b)
	case *evSudo:
		c.kind, requestID = "sudo", b.RequestID
		sudoCard(&data, b)
	default:
		return
	}
	if reqID == nil {
		c.requestID = requestID
	}
	t.clarifies[c.id] = c
	t.send(protocol.EvClarify, data)
}

// clarifyCard fills a clarify card with Hermes's questions (at most 5; a default one
// when it sent none) and records their ids and kinds in c.
func clarifyCard(c *clarifyState, data *protocol.ClarifyData, b *evClarify) {
	data.TimeoutS = 300
	for i, q := range b.Questions {
		if i == 5 {
			break
		}
		if q.Choices == nil {
			q.Choices = []string{}
		}
		data.Questions = append(data.Questions, protocol.ClarifyQuestion{Question: q.Question, Choices: q.Choices, MultiSelect: q.MultiSelect})
		c.qids = append(c.qids, firstNonEmpty(q.QID, fmt.Sprintf("q%d", i)))
		c.multi = append(c.multi, q.MultiSelect)
	}
	if len(data.Questions) == 0 {
		data.Questions = []protocol.ClarifyQuestion{{Question: "Hermes asks for your input.", Choices: []string{}}}
		c.qids, c.multi = []string{"q0"}, []bool{false}
	}
	data.Question, data.Choices, data.MultiSelect = data.Questions[0].Question, data.Questions[0].Choices, data.Questions[0].MultiSelect
}

// secretCard fills a vault card for the env var Hermes asks for.
func secretCard(data *protocol.ClarifyData, b *evSecret) {
	name := b.EnvVar
	data.Kind, data.Name, data.TimeoutS = protocol.ClarifyKindVault, name, 300
	data.Reason = b.Prompt
	data.Question = fmt.Sprintf("Hermes needs %s.", firstNonEmpty(name, "a secret"))
	if name != "" && validVaultName.MatchString(name) {
		data.SavedHint = "vault:" + name
	}
	data.AgentNotice = "Hermes keeps this value itself, in its own .env file in its home folder; Talaria does not store it."
}

// sudoCard fills a vault card for the sudo password.
func sudoCard(data *protocol.ClarifyData, b *evSudo) {
	data.Kind, data.Name, data.TimeoutS = protocol.ClarifyKindVault, "SUDO_PASSWORD", 120
	data.Question = "Hermes needs your sudo password."
	if b.Command != "" {
		data.Reason = "To run: " + capString(b.Command, 2048)
	} else {
		data.Reason = "A command it runs asks for administrator rights."
	}
	data.SavedHint = "vault:SUDO_PASSWORD"
	data.AgentNotice = "The password goes to Hermes for this command; Talaria does not store it unless you ask it to keep it in the system keychain."
}

var validVaultName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

func (t *turn) resolveClarify(c *clarifyState, reason string) {
	if c.resolved {
		return
	}
	c.resolved = true
	t.send(protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: c.id, Reason: reason})
}

func (t *turn) resolveClarifyByRequestID(rid, reason string) {
	for _, c := range t.clarifies {
		if c.requestID == rid && rid != "" {
			t.resolveClarify(c, reason)
		}
	}
}

// serverRequest handles a dialect-B request from the server.
func (t *turn) serverRequest(req *gwRequest) {
	switch b := req.Body.(type) {
	case *evApproval:
		t.approval(b, req.ID)
	case *evClarify, *evSecret, *evSudo:
		t.prompt(b, req.ID)
	default:
		// A prompt for a desktop GUI Talaria does not have (preview.read, theme.pick,
		// vault.unlock_prompt, ...): JSON-RPC's answer for an unknown method, so
		// Hermes goes on at once instead of waiting out its deadline.
		if t.r != nil {
			t.r.log.Info("declined a Hermes request Talaria has no card for", "method", req.Method)
		}
		if gw := t.s.gateway(); gw != nil {
			gw.respondError(req.ID, codeMethodNotFound, "Talaria has no "+req.Method+" card") //nolint:errcheck
		}
	}
}

// requestCancel maps request.cancel (dialect B) to the resolved frame of its card.
func (t *turn) requestCancel(b *evRequestCancel) {
	reason := protocol.ResolvedInterrupted
	switch b.Reason {
	case "timeout":
		reason = protocol.ResolvedTimeout
	case "resolved":
		reason = protocol.ResolvedAnswered
	}
	for _, a := range t.approvals {
		if reqIDString(a.reqID) == b.ID {
			t.resolveApproval(a, reason, "")
		}
	}
	for _, c := range t.clarifies {
		if reqIDString(c.reqID) == b.ID {
			t.resolveClarify(c, reason)
		}
	}
}

func reqIDString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
