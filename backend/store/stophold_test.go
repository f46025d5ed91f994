package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func TestStopHoldSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := st.CreateSession(ctx, NewSession{})
	if h, err := st.StopHold(ctx, sess.ID); err != nil || h {
		t.Fatalf("new session held: %v %v", h, err)
	}
	if err := st.SetStopHold(ctx, sess.ID, true); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if h, _ := st.StopHold(ctx, sess.ID); !h {
		t.Fatal("hold lost on reopen")
	}
	if err := st.SetStopHold(ctx, "nope", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}
