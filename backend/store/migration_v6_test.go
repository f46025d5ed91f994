package store

import (
	"strings"
	"testing"

	"talaria/sidecar/protocol"
)

// schemaV5Delta is what schema version 5 added to version 4, exactly as Talaria 5
// created it, written out here (not read from schema_v5.sql) for the same reason as
// schemaV1Literal.
const schemaV5Delta = `
CREATE TABLE approval_audit (
    id            INTEGER PRIMARY KEY,
    created_at    INTEGER NOT NULL,
    session_id    TEXT    NOT NULL DEFAULT '',
    session_title TEXT    NOT NULL DEFAULT '',
    stream_id     TEXT    NOT NULL DEFAULT '',
    runtime       TEXT    NOT NULL DEFAULT '',
    kind          TEXT    NOT NULL,
    tool          TEXT    NOT NULL DEFAULT '',
    subject       TEXT    NOT NULL,
    pattern       TEXT    NOT NULL DEFAULT '',
    description   TEXT    NOT NULL DEFAULT '',
    decision      TEXT    NOT NULL,
    decided_by    TEXT    NOT NULL DEFAULT '',
    policy        TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX approval_audit_time ON approval_audit(created_at);
CREATE INDEX approval_audit_session ON approval_audit(session_id, created_at);

CREATE TABLE redactions (
    mac        BLOB    PRIMARY KEY,
    key_id     TEXT    NOT NULL,
    length     INTEGER NOT NULL,
    roll       INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;
`

// v5Rows populates a version 5 database: a chat on Hermes with options and a settled
// turn, a live one, and an audit row.
const v5Rows = `
INSERT INTO meta VALUES ('schema_version', '5'), ('app_version', '5.0.0'), ('created_at', '1720000000000');
INSERT INTO sessions(id, title, title_manual, model, workspace, created_at, updated_at, active_stream_id, revision,
    message_count, deleted_at, pinned, archived_at, forked_from, fork_position, fork_key, hidden, parent_id,
    runtime, agent_session_id, options) VALUES
 ('r-chat', 'Photo triage', 0, 'llava', '/photos', 1720000000000, 1720000005000, NULL, 4, 2, NULL, 0, NULL, '', NULL, NULL, 0, '',
  'hermes:work', '20261201_x', '{"system_prompt":"be brief"}'),
 ('r-live', 'Running', 0, '', '', 1720000001000, 1720000002000, 'st-live', 2, 1, NULL, 0, NULL, '', NULL, NULL, 0, '',
  '', '', '{}');
INSERT INTO messages(session_id, position, role, content, stream_id, created_at) VALUES
 ('r-chat', 0, 'user', 'sort the holiday photos', 'st-r', 1720000000100),
 ('r-chat', 1, 'assistant', 'Sorted 120 photos by date.', 'st-r', 1720000000200),
 ('r-live', 0, 'user', 'still going', 'st-live', 1720000001000);
INSERT INTO streams VALUES ('st-r', 'r-chat', 1720000000100, 1720000000200, 'done'),
 ('st-live', 'r-live', 1720000001000, NULL, '');
INSERT INTO approval_audit(created_at, session_id, kind, subject, decision) VALUES
 (1720000000150, 'r-chat', 'command', 'mv *.jpg sorted/', 'once');
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
PRAGMA user_version = 5;
`

// buildV5 writes a version 5 database at path.
func buildV5(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path, "_journal_mode=WAL")
	if _, err := db.Exec(schemaV1Literal + schemaV2Delta + schemaV3Delta + schemaV4Delta + schemaV5Delta + v5Rows); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkV5Data checks a version 5 database after the migration: every row kept with no
// attachments, summaries or turn figures, and the new tables and columns usable on
// the old rows.
func checkV5Data(t *testing.T, s *Store, round int) {
	t.Helper()
	ctx := t.Context()
	chat := mustGet(t, s, "r-chat")
	if chat.Runtime != "hermes:work" || chat.Options != `{"system_prompt":"be brief"}` || chat.AgentSessionID != "20261201_x" {
		t.Errorf("r-chat = %+v", chat)
	}
	rows := mustMessages(t, s, "r-chat")
	if round == 0 && (len(rows) != 2 || len(rows[0].Attachments) != 0 || rows[1].SummaryCovers != 0) {
		t.Fatalf("r-chat rows = %+v", rows)
	}
	turns, err := s.SessionTurns(ctx, "r-chat")
	if err != nil || len(turns) != 1 || turns[0].StreamID != "st-r" || turns[0].CostSource != CostUnknown || turns[0].Model != "" {
		t.Errorf("SessionTurns = %+v, %v", turns, err)
	}
	if live := mustGet(t, s, "r-live"); live.ActiveStreamID != "st-live" {
		t.Errorf("r-live = %+v", live)
	}
	if list, err := s.ListAudit(ctx, AuditFilter{}); err != nil || len(list) != 1 {
		t.Errorf("audit = %+v, %v", list, err)
	}
	if round > 0 {
		return
	}
	// The new parts work on the old rows: an attachment staged and sent, a turn's
	// figures, a summary row.
	a, err := s.StageAttachment(ctx, "r-chat", Attachment{SHA256: strings.Repeat("ab", 32), Name: "beach.jpg",
		MIMEType: "image/jpeg", Kind: AttachmentImage, Size: 10, SentBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	user, err := s.AdmitTurn(ctx, "r-chat", "st-new", Message{Content: "and this one?", Attachments: []Attachment{a}})
	if err != nil || len(user.Attachments) != 1 || user.Attachments[0].MessageID != user.ID {
		t.Fatalf("AdmitTurn = %+v, %v", user, err)
	}
	if err := s.SettleTurnWith(ctx, "r-chat", "st-new", []Message{
		{Role: "assistant", Kind: KindSummary, Content: "They sorted photos.", SummaryCovers: 2},
		{Role: "assistant", Content: "A beach."}},
		protocol.Usage{InputTokens: 900, OutputTokens: 10, EstimatedCost: 0.002, CostReported: true}, TerminalDone,
		TurnStats{Model: "llava", ContextTokens: 910, CostSource: CostProvider}); err != nil {
		t.Fatal(err)
	}
	rows = mustMessages(t, s, "r-chat")
	if len(rows) != 5 || rows[2].Attachments[0].Name != "beach.jpg" || rows[3].SummaryCovers != 2 {
		t.Errorf("rows after a turn = %+v", rows)
	}
	turns, _ = s.SessionTurns(ctx, "r-chat")
	if len(turns) != 2 || turns[1].ContextTokens != 910 || turns[1].Usage.EstimatedCost != 0.002 || !turns[1].Usage.CostReported {
		t.Errorf("turns = %+v", turns)
	}
	// A second round finds the chat as the first left it.
	if _, err := s.SpliceMessages(ctx, "r-chat", mustGet(t, s, "r-chat").Revision, 2, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "SELECT count(*) FROM attachments"); n != 0 {
		t.Errorf("%d attachments left after their message was removed", n)
	}
}
