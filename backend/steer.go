package backend

import (
	"context"

	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// Steer sends text to the turn running in sessionID (the agent reads it at its next
// step), or starts a turn with it when none runs.
func (area *TurnsArea) Steer(ctx context.Context, sessionID, text string) (turn.SteerOutcome, error) {
	s := area.s
	return s.Runner.Steer(ctx, sessionID, text)
}

// WithdrawSteer takes back a queued steer and returns its text (turn.ErrSteerTaken when
// the agent already read it).
func (area *TurnsArea) WithdrawSteer(ctx context.Context, sessionID, steerID string) (string, error) {
	s := area.s
	return s.Runner.WithdrawSteer(ctx, sessionID, steerID)
}

// SteerNow asks the agent to read a queued steer at once.
func (area *TurnsArea) SteerNow(ctx context.Context, sessionID, steerID string) (protocol.SteerNowResult, error) {
	s := area.s
	return s.Runner.SteerNow(ctx, sessionID, steerID)
}

// PendingSteers lists the steers queued in the session's running turn.
func (area *TurnsArea) PendingSteers(sessionID string) []turn.SteerInfo {
	s := area.s
	return s.Runner.PendingSteers(sessionID)
}
