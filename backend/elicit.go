package backend

import (
	"context"
	"encoding/json"
	"fmt"

	"talaria/backend/pending"
	"talaria/sidecar/protocol"
)

// DismissElicitation answers an elicitation's clarify card (protocol.ClarifyData's
// Elicitation: an MCP server's or an ACP agent's form) without content: action is
// "decline" (the user declined) or "cancel" (the user dismissed it), the answers the
// MCP and ACP specs give besides accept. Errors: *InvalidAnswerError for another action
// or a card that is not an elicitation; *pending.StaleError when it is not waiting;
// *UndeliveredAnswerError when the answer did not reach the agent (the card stays).
func (area *ApprovalsArea) DismissElicitation(ctx context.Context, sessionID, clarifyID, action string) error {
	s := area.s
	if action != protocol.ElicitDecline && action != protocol.ElicitCancel {
		return &InvalidAnswerError{Message: fmt.Sprintf("an elicitation is answered %q or %q without content, not %q", protocol.ElicitDecline, protocol.ElicitCancel, action)}
	}
	it, err := s.Runner.Pending().Peek(sessionID, pending.KindClarify, clarifyID)
	if err != nil {
		return err
	}
	var cd protocol.ClarifyData
	_ = json.Unmarshal(it.Data, &cd)
	if !cd.Elicitation {
		return &InvalidAnswerError{Message: "this question is not an elicitation: answer it"}
	}
	raw, _ := json.Marshal(map[string]string{"action": action})
	if _, err := s.Runner.Pending().Claim(sessionID, pending.KindClarify, clarifyID); err != nil {
		return err
	}
	return s.deliver(ctx, sessionID, pending.KindClarify, clarifyID, protocol.MethodClarifyRespond,
		protocol.ClarifyRespondParams{SessionID: sessionID, ClarifyID: clarifyID, Response: raw})
}
