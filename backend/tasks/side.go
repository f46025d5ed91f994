package tasks

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"talaria/backend/store"
	"talaria/backend/turn"
)

// SideQuestion is a question answered beside a session's conversation (/btw). The
// window follows the answer as the frames of StreamID (events "frames", session_id
// SessionID) in a side panel; SessionID is a hidden copy of the parent's rows that is
// deleted when the answer ends.
type SideQuestion struct {
	ID              string `json:"id"`
	ParentSessionID string `json:"parent_session_id"`
	SessionID       string `json:"session_id"` // the throwaway copy
	StreamID        string `json:"stream_id"`
	Question        string `json:"question"`
}

// AskSideQuestion answers question from a throwaway copy of sessionID's saved rows
// (a hidden session), with no tools and chat.start's ephemeral flag, without waiting
// for or joining a turn the session runs: the session's own transcript gains nothing.
// It returns as soon as the turn started. The copy is deleted (tombstone, rows and
// journal purged) when the answer ends — done, failed or cancelled — and at once when
// the turn is refused. Errors: turn.ErrEmptyMessage; store.ErrNotFound; whatever
// refuses the turn (e.g. *turn.NotConfiguredError); ErrClosing.
func (m *Manager) AskSideQuestion(ctx context.Context, sessionID, question string) (SideQuestion, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return SideQuestion{}, turn.ErrEmptyMessage
	}
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return SideQuestion{}, ErrClosing
	}
	cp, err := m.store.ForkSession(ctx, store.ForkRequest{SessionID: sessionID, Through: -1, Hidden: true,
		Title: turn.ProvisionalTitle("Side question: " + question)})
	if err != nil {
		return SideQuestion{}, err
	}
	sq := &SideQuestion{ID: uuid.NewString(), ParentSessionID: sessionID, SessionID: cp.ID, Question: question}
	m.idx.Lock()
	m.sides[sq.ID] = sq
	m.sideOf[cp.ID] = sq.ID // AdjustConfig turns the tools off for it
	m.idx.Unlock()
	st, err := m.runner.StartTurn(ctx, cp.ID, question)
	if err != nil {
		m.endSide(sq)
		return SideQuestion{}, err
	}
	m.idx.Lock()
	sq.StreamID = st.StreamID
	out := *sq
	m.idx.Unlock()
	if !m.goTracked(func() {
		_ = m.runner.Wait(context.Background(), st.StreamID)
		m.endSide(sq)
	}) {
		_ = m.runner.Cancel(st.StreamID)
		_ = m.runner.Wait(ctx, st.StreamID)
		m.endSide(sq)
	}
	m.log.Info("side question started", "id", sq.ID, "session", sessionID, "copy", cp.ID)
	return out, nil
}

// endSide deletes a side question's copy and forgets it.
func (m *Manager) endSide(sq *SideQuestion) {
	m.deleteSession(sq.SessionID)
	m.idx.Lock()
	delete(m.sides, sq.ID)
	delete(m.sideOf, sq.SessionID)
	m.idx.Unlock()
}

// CancelSideQuestion stops a side question's answer (its copy is then deleted). A
// side question that already ended, or an unknown id, is a no-op.
func (m *Manager) CancelSideQuestion(id string) error {
	m.idx.Lock()
	sq := m.sides[id]
	stream := ""
	if sq != nil {
		stream = sq.StreamID
	}
	m.idx.Unlock()
	if stream == "" {
		return nil
	}
	return m.runner.Cancel(stream)
}
