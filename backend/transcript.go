package backend

import (
	"context"

	"talaria/backend/store"
)

// Paged reads for the window: the sidebar a page at a time, the transcript a page at a
// time (the last screen first, older pages as the user scrolls up, newer ones below a
// search hit), so opening a 5,000-message chat or listing 10,000 chats costs what a
// page costs.

// MaxSessionPage is the most sessions ListSessionsPage returns at once.
const MaxSessionPage = 500

// TranscriptPage is a page of a session's transcript (see store.MessagePage) with the
// session's metadata, read in one call.
type TranscriptPage struct {
	Session  store.Session   `json:"session"`
	Messages []store.Message `json:"messages"`
	// Before and After: the session has rows before the first / after the last row.
	Before bool `json:"before"`
	After  bool `json:"after"`
}

// ListSessionsPage returns limit sessions of the sidebar's order (pinned first, then
// newest activity; see store.ListSessions) starting at offset; limit <= 0 or over
// MaxSessionPage means MaxSessionPage. Metadata only.
func (area *ChatsArea) ListSessionsPage(ctx context.Context, offset, limit int) ([]store.Session, error) {
	s := area.s
	if limit <= 0 || limit > MaxSessionPage {
		limit = MaxSessionPage
	}
	out, err := s.Store.ListSessions(ctx, limit, max(offset, 0))
	if out == nil {
		out = []store.Session{}
	}
	return out, err
}

// GetTranscript returns the session and the last limit rows before position before
// (before < 0: its last rows); see store.MessagesBefore. Errors: store.ErrNotFound.
func (area *ChatsArea) GetTranscript(ctx context.Context, id string, before, limit int) (TranscriptPage, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return TranscriptPage{}, err
	}
	p, err := s.Store.MessagesBefore(ctx, id, before, limit)
	if err != nil {
		return TranscriptPage{}, err
	}
	return TranscriptPage{Session: sess, Messages: p.Messages, Before: p.Before, After: p.After}, nil
}

// GetTranscriptFrom returns the session and its first limit rows from position from
// on; see store.MessagesFrom. Errors: store.ErrNotFound.
func (area *ChatsArea) GetTranscriptFrom(ctx context.Context, id string, from, limit int) (TranscriptPage, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return TranscriptPage{}, err
	}
	p, err := s.Store.MessagesFrom(ctx, id, from, limit)
	if err != nil {
		return TranscriptPage{}, err
	}
	return TranscriptPage{Session: sess, Messages: p.Messages, Before: p.Before, After: p.After}, nil
}
