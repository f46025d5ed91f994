package backendtest

// SidecarHeapEnv is read on Unix only (heapprof_unix.go): Windows has no SIGUSR1.
const SidecarHeapEnv = "TALARIA_TEST_SIDECAR_HEAP"

func heapProfileOnSignal() {}
