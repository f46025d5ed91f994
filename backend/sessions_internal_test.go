package backend

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"talaria/backend/core"
	"talaria/backend/store"
)

// The start-up check moves a damaged file aside, and the report reaches the window
// through the store until it is dismissed.
func TestCheckStoreRecoversAndReports(t *testing.T) {
	dir := t.TempDir()
	paths := core.PathsFor(dir)
	junk := []byte(strings.Repeat("garbage ", 1000))
	if err := os.WriteFile(paths.DBPath, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	checkStore(context.Background(), paths.DBPath, slog.New(slog.NewTextHandler(&logs, nil)))
	if !strings.Contains(logs.String(), "recovered") {
		t.Errorf("log = %s", logs.String())
	}
	st, err := store.Open(context.Background(), paths.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Store: st}
	defer st.Close()
	rep, err := s.Chats().RecoveryReport(context.Background())
	if err != nil || !rep.Recovered || filepath.Dir(rep.BackupPath) != dir || !strings.Contains(rep.Message, rep.BackupPath) {
		t.Fatalf("report = %+v, %v", rep, err)
	}
	if b, _ := os.ReadFile(rep.BackupPath); !bytes.Equal(b, junk) {
		t.Error("the backup is not the damaged file")
	}
	if err := s.Chats().DismissRecoveryReport(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rep, _ := s.Chats().RecoveryReport(context.Background()); rep.Recovered {
		t.Errorf("report after dismissing = %+v", rep)
	}
}

func TestFileName(t *testing.T) {
	tests := map[string]string{
		"":                       "conversation",
		"  ":                     "conversation",
		"Plan: a/b\\c?":          "Plan- a-b-c",
		"...hidden":              "hidden",
		"tab\there":              "tab-here",
		strings.Repeat("é", 100): strings.Repeat("é", 80),
	}
	for in, want := range tests {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}
