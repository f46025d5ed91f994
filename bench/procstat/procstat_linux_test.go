package procstat

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestThreadsCountsWork checks the schedstat reading against work this process does: a
// thread that spins for a while is counted for about that long, by RunBetween, where
// /proc/<pid>/stat's ticks would read 0 or 10 ms.
func TestThreadsCountsWork(t *testing.T) {
	before, err := Threads(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if len(before) == 0 {
		t.Fatal("no threads read")
	}
	// Spin until this process has used 30 ms of CPU more by getrusage (not wall time: on
	// a loaded machine the spin may wait for a core), then the threads' run time must
	// agree with it: both come from the scheduler's accounting, read a moment apart.
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	cpu0 := cpu()
	sink := 0
	for cpu()-cpu0 < 30*time.Millisecond {
		for i := 0; i < 1_000_000; i++ {
			sink += i
		}
	}
	_ = sink
	now, err := Threads(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	used := cpu() - cpu0
	ran := RunBetween(before, now)
	if ran < used/2 || ran > used*3/2+10*time.Millisecond {
		t.Fatalf("RunBetween read %v while getrusage read %v", ran, used)
	}
	if _, err := Threads(1 << 30); err == nil {
		t.Fatal("a process that does not exist read without an error")
	}
}
