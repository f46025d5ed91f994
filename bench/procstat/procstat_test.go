package procstat

import (
	"testing"
	"time"
)

// TestRunBetween checks the arithmetic: growth of threads in both readings, the whole
// time of a new thread, nothing for one that ended.
func TestRunBetween(t *testing.T) {
	before := map[int]time.Duration{1: 10 * time.Millisecond, 2: 5 * time.Millisecond, 3: time.Second}
	after := map[int]time.Duration{1: 25 * time.Millisecond, 2: 5 * time.Millisecond, 4: 7 * time.Millisecond}
	if got, want := RunBetween(before, after), 22*time.Millisecond; got != want {
		t.Fatalf("RunBetween = %v, want %v", got, want)
	}
}
