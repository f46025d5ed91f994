//go:build unix

package backendtest

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

// SidecarHeapEnv names the environment variable that makes the test sidecar write its
// heap profile: set to a path prefix P, each SIGUSR1 the sidecar receives writes
// P-<n>.pprof (n counting from 1, after a full collection, sampling every 4 KiB allocated; renamed into place once
// written, so a reader waiting for the file sees it whole). For the memory benchmark
// (backend/bench_memory_test.go); unset, the sidecar does nothing on SIGUSR1.
const SidecarHeapEnv = "TALARIA_TEST_SIDECAR_HEAP"

// heapProfileOnSignal starts writing heap profiles on SIGUSR1 when SidecarHeapEnv is set.
func heapProfileOnSignal() {
	prefix := os.Getenv(SidecarHeapEnv)
	if prefix == "" {
		return
	}
	// Every 4 KiB allocated is sampled (not every 512 KiB): a few hundred bytes kept
	// per turn must show in a diff of two profiles.
	runtime.MemProfileRate = 4096
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	go func() {
		for n := 1; ; n++ {
			<-ch
			runtime.GC()
			path := fmt.Sprintf("%s-%d.pprof", prefix, n)
			f, err := os.Create(path + ".tmp")
			if err != nil {
				continue
			}
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil && cerr == nil {
				_ = os.Rename(path+".tmp", path)
			}
		}
	}()
}
