package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
)

// The generated TypeScript must be what the Go declarations generate now: run `make
// bindings` (or go run ./backend/contract/tsgen) after changing them.
func TestGeneratedTypeScriptIsCurrent(t *testing.T) {
	want, err := GenerateTypeScript()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(ModuleRoot(), GeneratedFile))
	if err != nil {
		t.Fatalf("read %s: %v (run make bindings)", GeneratedFile, err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s is out of date (run make bindings); first difference at line %d:\n have %q\n want %q", GeneratedFile, i+1, g, w)
			}
		}
	}
}

// Every frame name declared in sidecar/protocol has exactly one registered data type,
// and nothing else is registered.
func TestEveryFrameEventIsRegistered(t *testing.T) {
	declared := append(slices.Clone(protocol.SidecarEvents), protocol.HostEvents...)
	var registered []string
	for _, f := range Frames {
		if f.Data == nil {
			t.Errorf("frame %s has no data type", f.Event)
		}
		registered = append(registered, f.Event)
	}
	slices.Sort(declared)
	slices.Sort(registered)
	if !slices.Equal(declared, registered) {
		t.Fatalf("declared frames %v\nregistered %v", declared, registered)
	}
	if len(slices.Compact(slices.Clone(registered))) != len(registered) {
		t.Fatalf("a frame is registered twice: %v", registered)
	}
}

func TestCheckFrameRefusesUndeclaredMembers(t *testing.T) {
	if err := CheckFrame(protocol.EvDone, []byte(`{"usage":{"input_tokens":1},"duration_seconds":1,"tps":0,"terminal_state":"completed","tool_limit_reached":false}`)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ event, data string }{
		{protocol.EvDone, `{"usage":{},"truncatd":true}`},
		{protocol.EvApproval, `{"approval_id":"a","expires_at":1.5}`},
		{protocol.EvToolComplete, `{"tid":"t","edit_diff":{"files":[],"lines":3}}`},
		{"no_such_frame", `{}`},
		{protocol.EvSteerPending, `{"pending":[]}`},
	} {
		if err := CheckFrame(c.event, []byte(c.data)); err == nil {
			t.Errorf("CheckFrame(%s, %s) passed", c.event, c.data)
		}
	}
}

// The generator refuses what the wire must not carry: a time that is not epoch
// milliseconds, an anonymous struct.
func TestGeneratorRefusesSecondsAndAnonymousStructs(t *testing.T) {
	type secondsAt struct {
		ExpiresAt float64 `json:"expires_at"`
	}
	type anon struct {
		X struct{ A int } `json:"x"`
	}
	for _, v := range []any{secondsAt{}, anon{}} {
		saved := Types
		Types = append(slices.Clone(Types), TypeName{v, ""})
		_, err := GenerateTypeScript()
		Types = saved
		if err == nil {
			t.Errorf("%T generated", v)
		}
	}
}

func TestShapesMatchTheirEncoding(t *testing.T) {
	for _, s := range Shapes {
		for _, v := range s.Samples {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(reflect.New(reflect.TypeOf(s.As)).Interface()); err != nil {
				t.Errorf("%s encodes %s, which its shape %T does not declare: %v", s.Type, b, s.As, err)
			}
		}
	}
}
