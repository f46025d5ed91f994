package app

import "talaria/backend"

// GetPending returns the session's waiting approval and clarify (heads and counts) and
// whether YOLO is on.
func (a *App) GetPending(sessionID string) (backend.PendingView, error) {
	v, err := a.service().GetPending(a.bg(), sessionID)
	return v, userError(err)
}

// RespondApproval answers an approval card: once, session, always or deny. A card that
// is out of date is refused with a message starting "stale:".
func (a *App) RespondApproval(sessionID, approvalID, choice string) error {
	return userError(a.service().RespondApproval(a.bg(), sessionID, approvalID, choice))
}

// SetYolo turns approvals off or on for a session. fromApprovalID is the card YOLO was
// pressed on ("" from elsewhere); a card that is not the head of the queue is refused.
func (a *App) SetYolo(sessionID string, on bool, fromApprovalID string) error {
	return userError(a.service().SetYolo(a.bg(), sessionID, on, fromApprovalID))
}

// RespondClarify answers a clarify card: one answer per question, text or a list of
// choices.
func (a *App) RespondClarify(sessionID, clarifyID string, answers []any) error {
	return userError(a.service().RespondClarify(a.bg(), sessionID, clarifyID, answers))
}

// RespondVault answers a secret request. The reply never contains the secret.
func (a *App) RespondVault(sessionID, clarifyID string, answer backend.VaultAnswer, remember bool) (backend.VaultResult, error) {
	r, err := a.service().RespondVault(a.bg(), sessionID, clarifyID, answer, remember)
	return r, userError(err)
}

// GetAllowlist lists the always-allowed dangerous-command patterns.
func (a *App) GetAllowlist() ([]backend.AllowRule, error) {
	r, err := a.service().GetAllowlist(a.bg())
	return r, userError(err)
}

// RemoveAllowlist forgets an always-allowed pattern.
func (a *App) RemoveAllowlist(pattern string) error {
	return userError(a.service().RemoveAllowlist(a.bg(), pattern))
}
