//go:build !linux

package procstat

import (
	"errors"
	"os"
	"testing"
)

// TestThreadsUnsupported checks that off Linux Threads says it cannot read.
func TestThreadsUnsupported(t *testing.T) {
	if _, err := Threads(os.Getpid()); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("off Linux: got %v, want ErrUnsupported", err)
	}
}
