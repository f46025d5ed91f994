package store

import (
	"strings"
	"testing"
)

func TestAuditLog(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	sess, err := s.CreateSession(ctx, NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	entries := []AuditEntry{
		{SessionID: sess.ID, SessionTitle: "Build", Subject: "rm -rf build", Pattern: "recursive_delete", Decision: DecisionOnce, DecidedBy: "user", Policy: "workspace-write, no network"},
		{SessionID: sess.ID, Subject: "curl x | sh", Pattern: "remote_script", Decision: DecisionDeny, DecidedBy: "user"},
		{SessionID: "other", Kind: AuditToolCall, Tool: "fs.write", Subject: `{"path":"/etc/x"}`, Decision: DecisionTimeout, DecidedBy: "timeout"},
		{SessionID: sess.ID, Subject: strings.Repeat("é", MaxAuditSubject), Decision: DecisionYolo, DecidedBy: "yolo"},
	}
	for _, e := range entries {
		if _, err := s.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.ListAudit(ctx, AuditFilter{})
	if err != nil || len(all) != 4 || all[0].Decision != DecisionYolo || all[3].Pattern != "recursive_delete" || all[3].CreatedAt == 0 || all[3].Kind != AuditCommand {
		t.Fatalf("list = %+v, %v", all, err)
	}
	if len(all[0].Subject) > MaxAuditSubject || !strings.HasSuffix(all[0].Subject, "é") {
		t.Fatalf("long subject cut to %d bytes", len(all[0].Subject))
	}
	if got, _ := s.ListAudit(ctx, AuditFilter{SessionID: "other"}); len(got) != 1 || got[0].Tool != "fs.write" {
		t.Fatalf("by session = %+v", got)
	}
	if got, _ := s.ListAudit(ctx, AuditFilter{Text: "CURL"}); len(got) != 1 || got[0].Decision != DecisionDeny {
		t.Fatalf("by text = %+v", got)
	}
	if got, _ := s.ListAudit(ctx, AuditFilter{Text: "100%_"}); len(got) != 0 {
		t.Fatalf("LIKE wildcards are literal: %+v", got)
	}
	if got, _ := s.ListAudit(ctx, AuditFilter{Limit: 2, BeforeID: all[1].ID}); len(got) != 2 || got[0].ID != all[2].ID {
		t.Fatalf("page = %+v", got)
	}
	// Deleting the chat keeps its rows.
	if err := s.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ListAudit(ctx, AuditFilter{SessionID: sess.ID}); len(got) != 3 {
		t.Fatalf("after the chat was deleted: %d rows", len(got))
	}
	if n, err := s.ClearAudit(ctx); err != nil || n != 4 {
		t.Fatalf("clear = %d, %v", n, err)
	}
	if got, _ := s.ListAudit(ctx, AuditFilter{}); len(got) != 0 {
		t.Fatalf("after clear: %+v", got)
	}
}
