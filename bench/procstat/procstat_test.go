package procstat

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestThreadsCountsWork checks the schedstat reading against work this process does: a
// thread that spins for a while is counted for about that long, by RunBetween, where
// /proc/<pid>/stat's ticks would read 0 or 10 ms.
func TestThreadsCountsWork(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, err := Threads(os.Getpid()); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("off Linux: got %v, want ErrUnsupported", err)
		}
		return
	}
	before, err := Threads(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if len(before) == 0 {
		t.Fatal("no threads read")
	}
	// Spin until this process's threads have run for 30 ms of CPU more (not wall time:
	// on a loaded machine the spin may wait for a core).
	var ran time.Duration
	sink := 0
	for ran < 30*time.Millisecond {
		for i := 0; i < 1_000_000; i++ {
			sink += i
		}
		now, err := Threads(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		ran = RunBetween(before, now)
	}
	_ = sink
	if ran > 10*time.Second {
		t.Fatalf("RunBetween read %v for a spin of about 30 ms", ran)
	}
	if _, err := Threads(1 << 30); err == nil {
		t.Fatal("a process that does not exist read without an error")
	}
}

// TestRunBetween checks the arithmetic: growth of threads in both readings, the whole
// time of a new thread, nothing for one that ended.
func TestRunBetween(t *testing.T) {
	before := map[int]time.Duration{1: 10 * time.Millisecond, 2: 5 * time.Millisecond, 3: time.Second}
	after := map[int]time.Duration{1: 25 * time.Millisecond, 2: 5 * time.Millisecond, 4: 7 * time.Millisecond}
	if got, want := RunBetween(before, after), 22*time.Millisecond; got != want {
		t.Fatalf("RunBetween = %v, want %v", got, want)
	}
}
