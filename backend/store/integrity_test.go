package store

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Damage found by the background check is recovered under the open store: the damaged
// file is kept, the report saved, and the same Store reads and writes the recovered file.
func TestRecoverUnderTheOpenStore(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "talaria.db")
	ids := buildRecoveryFixture(t, path)
	s, err := OpenWith(t.Context(), path, Options{AppVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if problems, err := s.CheckIntegrity(t.Context()); err != nil || len(problems) != 0 {
		t.Fatalf("healthy file: %v %v", problems, err)
	}
	if err := s.SetIntegrityCheckedAt(t.Context(), 1234); err != nil {
		t.Fatal(err)
	}
	if at, err := s.IntegrityCheckedAt(t.Context()); err != nil || at != 1234 {
		t.Fatalf("IntegrityCheckedAt = %d, %v", at, err)
	}

	file, _ := os.ReadFile(path)
	leaves, perLeaf := tableLeaves(t, file, rootPage(t, path, "messages"))
	damagePages(t, path, leaves[len(leaves)/2])
	damaged, _ := os.ReadFile(path)
	problems, err := s.CheckIntegrity(t.Context())
	if err != nil || len(problems) == 0 {
		t.Fatalf("damaged file: problems %v, %v", problems, err)
	}

	// Reads and writes that come during the recovery wait for it and then succeed.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.ListSessions(t.Context(), 10, 0); err != nil {
				errs <- err
			}
		}()
	}
	rep, err := s.Recover(t.Context(), problems)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a read during the recovery: %v", err)
	}
	if err != nil || !rep.Recovered || rep.Messages != fixtureSessions*fixtureRows-perLeaf[len(leaves)/2] {
		t.Fatalf("Recover = %+v, %v", rep, err)
	}
	if b, _ := os.ReadFile(rep.BackupPath); !bytes.Equal(b, damaged) {
		t.Error("the backup is not the damaged file")
	}
	if saved, ok, err := s.RecoveryReport(t.Context()); err != nil || !ok || saved.BackupPath != rep.BackupPath {
		t.Fatalf("saved report %+v %v %v", saved, ok, err)
	}
	if problems, err := s.CheckIntegrity(t.Context()); err != nil || len(problems) != 0 {
		t.Fatalf("recovered file: %v %v", problems, err)
	}
	total := 0
	for _, id := range ids {
		ms, err := s.Messages(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		total += len(ms)
	}
	if total != rep.Messages {
		t.Errorf("%d messages readable, the report says %d", total, rep.Messages)
	}
	if _, err := s.CreateSession(t.Context(), NewSession{Title: "after"}); err != nil {
		t.Fatalf("a write after the recovery: %v", err)
	}
}
