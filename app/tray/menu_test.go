package tray

import (
	"bytes"
	"fmt"
	"image/png"
	"strings"
	"testing"

	"talaria/backend"
	"talaria/backend/supervisor"
)

func TestViewOf(t *testing.T) {
	ready := supervisor.Status{State: supervisor.StateReady, Runtime: "builtin", AgentVersion: "0.1.0"}
	idle := viewOf(backend.Activity{State: backend.ActivityIdle, Running: []backend.RunningTurn{}, Sidecar: ready})
	if idle.icon != backend.ActivityIdle || idle.title != "" || idle.header != "Nothing running" || len(idle.slots) != 0 ||
		idle.more != "" || idle.agent != "Agent: ready (built-in 0.1.0)" || idle.tooltip != "Talaria: idle" {
		t.Fatalf("idle view = %+v", idle)
	}

	working := viewOf(backend.Activity{State: backend.ActivityNeedsYou, Waiting: 1, Sidecar: ready, Running: []backend.RunningTurn{
		{SessionID: "s1", Title: "Refactor   the parser"},
		{SessionID: "s2", Title: "", Approvals: 1},
		{SessionID: "hidden", ParentSessionID: "s1", TaskID: "t1", Title: "Background: run the tests"},
	}})
	want := []slot{{"s1", "Refactor the parser"}, {"s2", "Untitled chat — waiting for you"}, {"s1", "Background: run the tests"}}
	if fmt.Sprint(working.slots) != fmt.Sprint(want) || working.title != "3" || working.icon != backend.ActivityNeedsYou ||
		working.header != "Running: 3 turns · 1 waiting for you" || working.tooltip != "Talaria: 1 waiting for you" {
		t.Fatalf("working view = %+v", working)
	}

	var many []backend.RunningTurn
	for i := 0; i < Slots+3; i++ {
		many = append(many, backend.RunningTurn{SessionID: fmt.Sprint(i), Title: strings.Repeat("long title ", 10)})
	}
	v := viewOf(backend.Activity{State: backend.ActivityWorking, Running: many, Sidecar: ready})
	if len(v.slots) != Slots || v.more != "and 3 more…" || v.header != "Running: 11 turns" || v.tooltip != "Talaria: 11 turns running" {
		t.Fatalf("many view = %+v", v)
	}
	if n := len([]rune(v.slots[0].label)); n > 40 || !strings.HasSuffix(v.slots[0].label, "…") {
		t.Fatalf("slot label not cut: %q", v.slots[0].label)
	}
	if one := viewOf(backend.Activity{State: backend.ActivityWorking, Running: many[:1]}); one.header != "Running: 1 turn" {
		t.Fatalf("header = %q", one.header)
	}
	if z := viewOf(backend.Activity{}); z.icon != backend.ActivityIdle {
		t.Fatalf("zero activity icon = %q", z.icon)
	}
}

func TestAgentLine(t *testing.T) {
	for _, c := range []struct {
		st   supervisor.Status
		want string
	}{
		{supervisor.Status{State: supervisor.StateReady, Runtime: "builtin"}, "Agent: ready (built-in)"},
		{supervisor.Status{State: supervisor.StateReady, Runtime: "hermes", AgentVersion: "0.9"}, "Agent: ready (hermes 0.9)"},
		{supervisor.Status{State: supervisor.StateStarting}, "Agent: starting…"},
		{supervisor.Status{State: supervisor.StateRestarting, Attempt: 2, NextRetryS: 0.9}, "Agent: restarting (attempt 2, next try in 1 s)"},
		{supervisor.Status{State: supervisor.StateRestarting}, "Agent: restarting…"},
		{supervisor.Status{State: supervisor.StateDown, Error: "could not start the agent process: fork/exec /x: no such file or directory"},
			"Agent: down — could not start the agent process: fork/exec /x…"},
		{supervisor.Status{State: supervisor.StateDown}, "Agent: down"},
		{supervisor.Status{State: supervisor.StateStopped}, "Agent: stopped"},
	} {
		if got := agentLine(c.st); got != c.want {
			t.Errorf("agentLine(%+v) = %q, want %q", c.st, got, c.want)
		}
	}
}

func TestIcons(t *testing.T) {
	seen := map[string]backend.ActivityState{}
	for _, s := range []backend.ActivityState{backend.ActivityIdle, backend.ActivityWorking, backend.ActivityNeedsYou, backend.ActivityDown} {
		b := iconFor(s)
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s icon: %v", s, err)
		}
		if r := img.Bounds(); r.Dx() != 64 || r.Dy() != 64 {
			t.Fatalf("%s icon is %v", s, r)
		}
		if other, dup := seen[string(b)]; dup {
			t.Fatalf("%s and %s share an icon", s, other)
		}
		seen[string(b)] = s
	}
}

func TestFullAccessIsMarked(t *testing.T) {
	v := viewOf(backend.Activity{State: backend.ActivityWorking, FullAccess: 1, Running: []backend.RunningTurn{
		{SessionID: "s1", Title: "Deploy", FullAccess: true}, {SessionID: "s2", Title: "Notes"}}})
	if v.title != "2 ⚠ FULL ACCESS" || v.slots[0].label != "⚠ FULL ACCESS · Deploy" || v.slots[1].label != "Notes" ||
		!strings.Contains(v.tooltip, "1 with full access") {
		t.Fatalf("%+v", v)
	}
}
