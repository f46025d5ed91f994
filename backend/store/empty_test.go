package store

import (
	"strings"
	"testing"

	"talaria/sidecar/protocol"
)

// Only a chat with nothing of the user's in it is deleted as empty: one with a row, a
// running turn, draft text, a staged file, a manual title, a pin or a background task
// stays; DeleteEmptySessions spares chats updated since its cut-off.
func TestDeleteEmptySessions(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	clock := int64(1_780_000_000_000)
	s.now = func() int64 { clock += 10; return clock }
	mk := func() string { t.Helper(); return mustSession(t, s, "").ID }
	empty, blankDraft := mk(), mk()
	if err := s.SaveDraft(ctx, blankDraft, "  \n"); err != nil {
		t.Fatal(err)
	}
	withRow, running, draft, staged, titled, pinned := mk(), mk(), mk(), mk(), mk(), mk()
	if _, err := s.AdmitTurn(ctx, withRow, "st1", Message{Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleTurn(ctx, withRow, "st1", nil, protocol.Usage{}, TerminalDone); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AdmitTurn(ctx, running, "st2", Message{Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveDraft(ctx, draft, "half a thought"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StageAttachment(ctx, staged, Attachment{SHA256: strings.Repeat("ab", 32), Name: "a.txt", MIMEType: "text/plain", Kind: AttachmentText, Size: 1, SentBytes: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTitle(ctx, titled, "Plans", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPinned(ctx, pinned, true); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{withRow, running, draft, staged, titled, pinned} {
		if gone, err := s.DeleteIfEmpty(ctx, id); err != nil || gone {
			t.Errorf("DeleteIfEmpty(%s) = %v, %v; it is not empty", mustGet(t, s, id).Title, gone, err)
		}
	}
	if gone, err := s.DeleteIfEmpty(ctx, empty); err != nil || !gone {
		t.Fatalf("DeleteIfEmpty(empty) = %v, %v", gone, err)
	}
	if _, err := s.DeleteIfEmpty(ctx, empty); err == nil {
		t.Error("a deleted chat was found again")
	}
	later := mk() // updated after the cut-off
	cut := mustGet(t, s, later).UpdatedAt
	if n, err := s.DeleteEmptySessions(ctx, cut); err != nil || n != 1 {
		t.Fatalf("DeleteEmptySessions = %d, %v; want only the blank-draft chat", n, err)
	}
	list, err := s.ListSessions(ctx, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 7 {
		t.Errorf("%d chats listed, want the 6 with something in them and the new one", len(list))
	}
}
