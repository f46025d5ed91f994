package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talaria/sidecar/protocol"
)

func digest(c string) string { return strings.Repeat(c, 64) }

func imageAtt(name, sha string) Attachment {
	return Attachment{SHA256: sha, Name: name, MIMEType: "image/png", Kind: AttachmentImage, Size: 100, SentBytes: 100}
}

func TestStagedAttachmentsAreSentWithTheUserRow(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	sess := mustSession(t, s, "a")
	other := mustSession(t, s, "b")
	a1, err := s.StageAttachment(ctx, sess.ID, imageAtt("one.png", digest("1")))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := s.StageAttachment(ctx, sess.ID, Attachment{SHA256: digest("2"), Name: "notes.txt", MIMEType: "text/plain",
		Kind: AttachmentText, Size: 5000, SentBytes: 4096})
	if err != nil || !a2.Truncated() {
		t.Fatalf("stage text = %+v, %v", a2, err)
	}
	a3, _ := s.StageAttachment(ctx, sess.ID, imageAtt("three.png", digest("3")))
	if err := s.UnstageAttachment(ctx, sess.ID, a3.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.UnstageAttachment(ctx, sess.ID, a3.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("unstage twice = %v", err)
	}
	staged, err := s.StagedAttachments(ctx, sess.ID)
	if err != nil || len(staged) != 2 || staged[0].ID != a1.ID || staged[1].ID != a2.ID {
		t.Fatalf("staged = %+v, %v", staged, err)
	}
	// Another session cannot send them.
	if _, err := s.AdmitTurn(ctx, other.ID, "st-x", Message{Content: "steal", Attachments: []Attachment{{ID: a1.ID, SessionID: sess.ID}}}); err == nil {
		// The attachment is not staged in other: it is inserted from its fields, which are empty.
		t.Error("another session sent a foreign staged attachment")
	}
	user, err := s.AdmitTurn(ctx, sess.ID, "st-1", Message{Content: "look", Attachments: []Attachment{a2, a1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(user.Attachments) != 2 || user.Attachments[0].ID != a2.ID || user.Attachments[0].MessageID != user.ID {
		t.Fatalf("admitted = %+v", user.Attachments)
	}
	if staged, _ := s.StagedAttachments(ctx, sess.ID); len(staged) != 0 {
		t.Errorf("still staged: %+v", staged)
	}
	rows := mustMessages(t, s, sess.ID)
	if len(rows) != 1 || len(rows[0].Attachments) != 2 || rows[0].Attachments[0].Name != "notes.txt" || rows[0].Attachments[1].Name != "one.png" {
		t.Fatalf("rows = %+v", rows)
	}
	// An attachment already sent cannot be sent again by id.
	if err := s.SettleTurn(ctx, sess.ID, "st-1", nil, protocol.Usage{}, TerminalDone); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AdmitTurn(ctx, sess.ID, "st-2", Message{Content: "again", Attachments: []Attachment{a1}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("resending a sent attachment by id = %v", err)
	}
	if got := mustGet(t, s, sess.ID); got.MessageCount != 1 || got.ActiveStreamID != "" {
		t.Errorf("a refused admission wrote: %+v", got)
	}
	// Resending the same files by their fields (a retry) makes new rows.
	re := user.Attachments[1]
	re.ID = ""
	user2, err := s.AdmitTurn(ctx, sess.ID, "st-3", Message{Content: "again", Attachments: []Attachment{re}})
	if err != nil || len(user2.Attachments) != 1 || user2.Attachments[0].ID == a1.ID || user2.Attachments[0].SHA256 != digest("1") {
		t.Fatalf("resend = %+v, %v", user2, err)
	}
	for _, bad := range []Attachment{
		{SHA256: "ABC", Name: "x", MIMEType: "image/png", Kind: AttachmentImage},
		{SHA256: digest("4"), Name: "", MIMEType: "image/png", Kind: AttachmentImage},
		{SHA256: digest("4"), Name: "x", MIMEType: "image/png", Kind: "video"},
		{SHA256: digest("4"), Name: "x", MIMEType: "text/plain", Kind: AttachmentText, Size: 10, SentBytes: 11},
	} {
		if _, err := s.StageAttachment(ctx, sess.ID, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("stage %+v = %v", bad, err)
		}
	}
}

func TestAttachmentsFollowForksAndDeletes(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	sess := mustSession(t, s, "a")
	a, _ := s.StageAttachment(ctx, sess.ID, imageAtt("one.png", digest("1")))
	if _, err := s.AdmitTurn(ctx, sess.ID, "st-1", Message{Content: "look", Attachments: []Attachment{a}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleTurn(ctx, sess.ID, "st-1", []Message{{Role: "assistant", Content: "a dot"}}, protocol.Usage{}, TerminalDone); err != nil {
		t.Fatal(err)
	}
	staged, _ := s.StageAttachment(ctx, sess.ID, imageAtt("later.png", digest("2")))
	fork, err := s.ForkSession(ctx, ForkRequest{SessionID: sess.ID, Through: -1})
	if err != nil {
		t.Fatal(err)
	}
	frows := mustMessages(t, s, fork.ID)
	if len(frows[0].Attachments) != 1 || frows[0].Attachments[0].ID == a.ID || frows[0].Attachments[0].SHA256 != digest("1") ||
		frows[0].Attachments[0].MessageID != frows[0].ID || frows[0].Attachments[0].SessionID != fork.ID {
		t.Fatalf("fork rows = %+v", frows)
	}
	if st, _ := s.StagedAttachments(ctx, fork.ID); len(st) != 0 {
		t.Errorf("the fork took the composer's attachments: %+v", st)
	}
	inUse, _ := s.BlobsInUse(ctx)
	if !inUse[digest("1")] || !inUse[digest("2")] || len(inUse) != 2 {
		t.Errorf("in use = %v", inUse)
	}
	if err := s.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	inUse, _ = s.BlobsInUse(ctx)
	if !inUse[digest("1")] || inUse[digest("2")] {
		t.Errorf("after deleting the source: in use = %v (the fork keeps one, the staged one goes)", inUse)
	}
	if _, err := s.Attachment(ctx, sess.ID, staged.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("staged attachment of a deleted chat = %v", err)
	}
	if err := s.DeleteSession(ctx, fork.ID); err != nil {
		t.Fatal(err)
	}
	if inUse, _ = s.BlobsInUse(ctx); len(inUse) != 0 {
		t.Errorf("after deleting both: in use = %v", inUse)
	}
	if n := count(t, s, "SELECT count(*) FROM attachments"); n != 0 {
		t.Errorf("%d attachment rows left", n)
	}
}

func TestExportImportCarriesAttachmentsAndSummaries(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	sess := mustSession(t, s, "trip")
	if err := s.SetSessionOptions(ctx, sess.ID, `{"max_output_tokens":300}`); err != nil {
		t.Fatal(err)
	}
	a, _ := s.StageAttachment(ctx, sess.ID, imageAtt("beach.png", digest("b")))
	if _, err := s.AdmitTurn(ctx, sess.ID, "st-1", Message{Content: "look", Attachments: []Attachment{a}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleTurn(ctx, sess.ID, "st-1", []Message{
		{Role: "assistant", Kind: KindSummary, Content: "Earlier: planning.", SummaryCovers: 1},
		{Role: "assistant", Content: "A beach."}}, protocol.Usage{}, TerminalDone); err != nil {
		t.Fatal(err)
	}
	doc, err := s.ExportSession(ctx, sess.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Version != 2 || doc.Session.Options != `{"max_output_tokens":300}` || len(doc.Messages[0].Attachments) != 1 || doc.Messages[1].SummaryCovers != 1 {
		t.Fatalf("export = %+v", doc)
	}
	md := doc.Markdown(time.UTC)
	if !strings.Contains(md, "*Attached: beach.png (image/png, 100 bytes)*") || !strings.Contains(md, "> Earlier: planning.") {
		t.Errorf("markdown:\n%s", md)
	}
	doc.Messages[0].Attachments[0].Data = []byte("the bytes")
	b, _ := json.Marshal(doc)
	imp, err := s.ImportSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	rows := mustMessages(t, s, imp.ID)
	if len(rows[0].Attachments) != 1 || rows[0].Attachments[0].ID == a.ID || rows[0].Attachments[0].SessionID != imp.ID ||
		rows[0].Attachments[0].Data != nil || rows[1].SummaryCovers != 1 || rows[1].Kind != KindSummary {
		t.Fatalf("imported rows = %+v", rows)
	}
	if got := mustGet(t, s, imp.ID); got.Options != `{"max_output_tokens":300}` {
		t.Errorf("imported options = %s", got.Options)
	}
	// Bad attachments are refused with the field named.
	var d map[string]any
	_ = json.Unmarshal(b, &d)
	d["messages"].([]any)[0].(map[string]any)["attachments"].([]any)[0].(map[string]any)["sha256"] = "nope"
	b2, _ := json.Marshal(d)
	var ie *ImportError
	if _, err := s.ImportSession(ctx, b2); !errors.As(err, &ie) || ie.Field != "messages[0].attachments[0]" {
		t.Errorf("bad digest import = %v", err)
	}
	d["messages"].([]any)[1].(map[string]any)["summary_covers"] = 9
	d["messages"].([]any)[0].(map[string]any)["attachments"].([]any)[0].(map[string]any)["sha256"] = digest("b")
	b3, _ := json.Marshal(d)
	if _, err := s.ImportSession(ctx, b3); !errors.As(err, &ie) || ie.Field != "messages[1].summary_covers" {
		t.Errorf("bad summary import = %v", err)
	}
}

func TestRecoveryKeepsAttachments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	filler := mustSession(t, s, "first")
	if _, err := s.AppendMessages(ctx, filler.ID, filler.Revision, []Message{{Role: "user", Content: "x"}, {Role: "assistant", Content: "y"}}); err != nil {
		t.Fatal(err)
	}
	sess := mustSession(t, s, "photos")
	a, _ := s.StageAttachment(ctx, sess.ID, imageAtt("cat.png", digest("c")))
	if _, err := s.AdmitTurn(ctx, sess.ID, "st", Message{Content: "a cat", Attachments: []Attachment{a}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StageAttachment(ctx, sess.ID, imageAtt("dog.png", digest("d"))); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := recoverDatabase(ctx, path, []string{"test"}, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows := mustMessages(t, s, sess.ID)
	if len(rows) != 1 || len(rows[0].Attachments) != 1 || rows[0].Attachments[0].Name != "cat.png" || rows[0].Attachments[0].MessageID != rows[0].ID {
		t.Fatalf("rows after recovery = %+v", rows)
	}
	if st, _ := s.StagedAttachments(ctx, sess.ID); len(st) != 1 || st[0].Name != "dog.png" {
		t.Errorf("staged after recovery = %+v", st)
	}
}

// The window reads transcripts by pages (MessagesBefore, MessagesFrom): a page's user
// rows carry their files like the whole transcript's, and only their own.
func TestTranscriptPagesCarryAttachments(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	sess := mustSession(t, s, "a")
	var want []string
	for i := range 3 {
		a, err := s.StageAttachment(ctx, sess.ID, imageAtt(fmt.Sprintf("p%d.png", i), digest(fmt.Sprint(i))))
		if err != nil {
			t.Fatal(err)
		}
		st := fmt.Sprintf("st-%d", i)
		if _, err := s.AdmitTurn(ctx, sess.ID, st, Message{Content: fmt.Sprint("q", i), Attachments: []Attachment{a}}); err != nil {
			t.Fatal(err)
		}
		if err := s.SettleTurn(ctx, sess.ID, st, []Message{{Role: "assistant", Content: "ok"}}, protocol.Usage{}, TerminalDone); err != nil {
			t.Fatal(err)
		}
		want = append(want, a.Name)
	}
	names := func(rows []Message) (out []string) {
		for _, m := range rows {
			if m.Role == "user" {
				if len(m.Attachments) != 1 {
					t.Fatalf("row %d (%q) has %d attachments, want 1", m.Position, m.Content, len(m.Attachments))
				}
				out = append(out, m.Attachments[0].Name)
			} else if len(m.Attachments) != 0 {
				t.Errorf("row %d (%s) has attachments", m.Position, m.Role)
			}
		}
		return out
	}
	last, err := s.MessagesBefore(ctx, sess.ID, -1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(last.Messages); fmt.Sprint(got) != fmt.Sprint(want[2:]) {
		t.Errorf("last page's files = %v, want %v", got, want[2:])
	}
	first, err := s.MessagesFrom(ctx, sess.ID, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(first.Messages); fmt.Sprint(got) != fmt.Sprint(want[:2]) {
		t.Errorf("first page's files = %v, want %v", got, want[:2])
	}
}
