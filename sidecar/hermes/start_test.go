package hermes_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"talaria/sidecar/hermes"
	"talaria/sidecar/protocol"
)

// A Hermes that cannot be used never crashes the runtime: rpc.hello's Ready answers a
// typed error saying what is wrong and what to do.
func TestReadyExplainsAnUnusableHermes(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old-python")
	// An interpreter whose Hermes is 0.9.0: no tui_gateway (the probe's three lines).
	os.WriteFile(old, []byte("#!/bin/sh\necho 3.11.2\necho 0.9.0\necho none\n"), 0o755) //nolint:errcheck
	broken := filepath.Join(dir, "broken-python")
	os.WriteFile(broken, []byte("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'hermes_cli'\" >&2\nexit 1\n"), 0o755) //nolint:errcheck
	for _, c := range []struct {
		name, python, cond string
		words              []string
	}{
		{"missing", filepath.Join(dir, "no-such-python"), protocol.CondAgentUnavailable, []string{"not usable", "no-such-python"}},
		{"no hermes_cli", broken, protocol.CondAgentUnavailable, []string{"No module named 'hermes_cli'"}},
		{"too old", old, protocol.CondAgentIncompatible, []string{"0.9.0", "0.11.0", "0.19.0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt := hermes.New(hermes.Options{Python: c.python, StartTimeout: 20 * time.Second})
			defer rt.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := rt.Ready(ctx)
			var pe *protocol.Error
			if !errors.As(err, &pe) || pe.Condition() != c.cond {
				t.Fatalf("Ready: %v", err)
			}
			for _, w := range c.words {
				if !strings.Contains(pe.Message, w) {
					t.Errorf("message %q lacks %q", pe.Message, w)
				}
			}
			if pe.Data.Hint == "" {
				t.Errorf("no hint")
			}
		})
	}
}
