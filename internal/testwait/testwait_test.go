package testwait

import (
	"testing"
)

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	For(t, "three checks", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("checked %d times, want 3", n)
	}
}

func TestRecvAndDone(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if v := Recv(t, ch, "a value"); v != 7 {
		t.Fatalf("got %d", v)
	}
	done := make(chan struct{})
	close(done)
	Done(t, done, "a closed channel")
}

func TestUntilGivesUpAtTheDeadline(t *testing.T) {
	old := Timeout
	Timeout = 0
	defer func() { Timeout = old }()
	if Until(func() bool { return false }) {
		t.Fatal("Until returned true for a condition that never holds")
	}
}
