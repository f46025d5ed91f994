package backend_test

import (
	"context"
	"testing"

	"talaria/backend"
	"talaria/backend/backendtest"
)

// Two agents saved under one name are told apart in the runtime pickers.
func TestRuntimeLabelsAreDistinct(t *testing.T) {
	h := backendtest.New(t, "")
	ctx := context.Background()
	for _, cmd := range []string{"opencode", "/opt/other/opencode"} {
		if _, err := h.Svc.ACP().SaveACPAgent(ctx, backend.ACPAgent{Name: "OpenCode", Command: cmd, Args: []string{"acp"}}); err != nil {
			t.Fatal(err)
		}
	}
	opts, err := h.Svc.Agents().ListRuntimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	n := 0
	for _, o := range opts {
		if prev, ok := seen[o.Label]; ok {
			t.Errorf("%s and %s are both labelled %q", prev, o.ID, o.Label)
		}
		seen[o.Label] = o.ID
		if o.Kind == "acp" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("ACP runtimes listed: %+v", opts)
	}
}
