package app

import (
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// Steer sends text into the session's running turn, or starts a turn when none runs.
func (a *App) Steer(sessionID, text string) (turn.SteerOutcome, error) {
	o, err := a.service().Steer(a.bg(), sessionID, text)
	return o, userError(err)
}

// WithdrawSteer takes a queued message back (Edit, Cancel) and returns its text.
func (a *App) WithdrawSteer(sessionID, steerID string) (string, error) {
	t, err := a.service().WithdrawSteer(a.bg(), sessionID, steerID)
	return t, userError(err)
}

// SteerNow asks the agent to read a queued message at once.
func (a *App) SteerNow(sessionID, steerID string) (protocol.SteerNowResult, error) {
	r, err := a.service().SteerNow(a.bg(), sessionID, steerID)
	return r, userError(err)
}

// PendingSteers lists the messages queued for the session's running turn.
func (a *App) PendingSteers(sessionID string) []turn.SteerInfo {
	return a.service().PendingSteers(sessionID)
}
