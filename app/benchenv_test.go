package app

import (
	"strings"
	"testing"
)

// A benchmark setting that is not a whole number, or is below its floor, is refused
// with the variable's name, not silently read as the default.
func TestBenchEnvIntRefusesBadValues(t *testing.T) {
	t.Setenv("TALARIA_BENCH_TURNS", "")
	if v, err := benchEnvInt("TALARIA_BENCH_TURNS", 200, 20); err != nil || v != 200 {
		t.Fatalf("unset: %d %v", v, err)
	}
	t.Setenv("TALARIA_BENCH_TURNS", "60")
	if v, err := benchEnvInt("TALARIA_BENCH_TURNS", 200, 20); err != nil || v != 60 {
		t.Fatalf("60: %d %v", v, err)
	}
	for _, bad := range []string{"ten", "10", "-1", "1e3", " 50"} {
		t.Setenv("TALARIA_BENCH_TURNS", bad)
		if _, err := benchEnvInt("TALARIA_BENCH_TURNS", 200, 20); err == nil || !strings.Contains(err.Error(), "TALARIA_BENCH_TURNS") {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}
