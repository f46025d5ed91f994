package protocol

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// The frame names are declared once here and mirrored in the frontend; this test keeps
// frontend/src/lib/protocol.ts equal to SidecarEvents and HostEvents, in order.
func TestFrontendMirrorsFrameNames(t *testing.T) {
	src, err := os.ReadFile("../../frontend/src/lib/protocol.ts")
	if err != nil {
		t.Fatalf("read the TypeScript mirror: %v", err)
	}
	for name, want := range map[string][]string{"SIDECAR_EVENTS": SidecarEvents, "HOST_EVENTS": HostEvents} {
		block := regexp.MustCompile(`(?s)export const ` + name + ` = \[(.*?)\] as const`).FindSubmatch(src)
		if block == nil {
			t.Fatalf("%s not found in protocol.ts", name)
		}
		var got []string
		for _, m := range regexp.MustCompile(`'([a-z_]+)'`).FindAllSubmatch(block[1], -1) {
			got = append(got, string(m[1]))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s in protocol.ts = %v\nGo declares %v", name, got, want)
		}
	}
}
