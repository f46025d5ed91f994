package tray

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"talaria/backend"
	"talaria/backend/supervisor"
)

// Slots is how many running turns the menu lists; the rest are counted in one line.
const Slots = 8

// view is what the tray shows for one Activity. It is computed without GTK so it can
// be tested anywhere.
type view struct {
	icon    backend.ActivityState
	title   string // beside the icon where the host shows it (Linux label): the running count
	tooltip string // where the platform has tooltips (macOS, Windows)
	header  string // the first line of the "running" section
	slots   []slot // at most Slots
	more    string // "and N more", "" when all fit
	agent   string // the agent status line
}

type slot struct {
	sessionID string
	label     string
}

func viewOf(a backend.Activity) view {
	v := view{icon: a.State}
	if v.icon == "" {
		v.icon = backend.ActivityIdle
	}
	n := len(a.Running)
	if n > 0 {
		v.title = fmt.Sprint(n)
	}
	if a.FullAccess > 0 {
		// Commands run outside the sandbox: said beside the icon, in the menu and the tooltip.
		v.title = strings.TrimSpace(v.title + " ⚠ FULL ACCESS")
	}
	switch {
	case n == 0:
		v.header = "Nothing running"
	case a.Waiting > 0:
		v.header = fmt.Sprintf("Running: %s · %d waiting for you", plural(n, "turn"), a.Waiting)
	default:
		v.header = "Running: " + plural(n, "turn")
	}
	for i, r := range a.Running {
		if i == Slots {
			v.more = fmt.Sprintf("and %d more…", n-Slots)
			break
		}
		label := cut(r.Title, 40)
		if label == "" {
			label = "Untitled chat"
		}
		if r.FullAccess {
			label = "⚠ FULL ACCESS · " + label
		}
		if r.Approvals+r.Clarifies > 0 {
			label += " — waiting for you"
		}
		open := r.SessionID
		if r.ParentSessionID != "" { // a background task or side question: open its session
			open = r.ParentSessionID
		}
		v.slots = append(v.slots, slot{sessionID: open, label: label})
	}
	v.agent = agentLine(a.Sidecar)
	v.tooltip = "Talaria: " + tooltipState(a)
	if a.FullAccess > 0 {
		v.tooltip += fmt.Sprintf(" (%d with full access: commands outside the sandbox)", a.FullAccess)
	}
	return v
}

func tooltipState(a backend.Activity) string {
	switch a.State {
	case backend.ActivityNeedsYou:
		return fmt.Sprintf("%d waiting for you", a.Waiting)
	case backend.ActivityDown:
		return "the agent is down"
	case backend.ActivityWorking:
		return plural(len(a.Running), "turn") + " running"
	}
	return "idle"
}

// agentLine is the menu's agent status line.
func agentLine(st supervisor.Status) string {
	switch st.State {
	case supervisor.StateReady:
		name := "built-in"
		if st.Runtime != "" && st.Runtime != "builtin" {
			name = st.Runtime
		}
		if v := st.AgentVersion; v != "" {
			name += " " + v
		}
		return "Agent: ready (" + name + ")"
	case supervisor.StateStarting:
		return "Agent: starting…"
	case supervisor.StateRestarting:
		if st.Attempt > 0 {
			return fmt.Sprintf("Agent: restarting (attempt %d, next try in %d s)", st.Attempt, int(math.Ceil(st.NextRetryS)))
		}
		return "Agent: restarting…"
	case supervisor.StateDown:
		if e := cut(st.Error, 50); e != "" {
			return "Agent: down — " + e
		}
		return "Agent: down"
	case supervisor.StateStopped:
		return "Agent: stopped"
	}
	return "Agent: " + string(st.State)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// cut folds whitespace and shortens s to at most max characters.
func cut(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:max-1]), " .,;:") + "…"
}
