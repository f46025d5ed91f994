package backend

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"talaria/backend/bus"
	"talaria/backend/pending"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// EventActivity is published on the bus (payload Activity) whenever the activity
// changes; app/ forwards it to the window like every bus event, and the tray draws it.
const EventActivity = "activity"

// ActivityState is the one word the tray icon shows.
type ActivityState string

// Activity states, in the order they win over each other: something waiting for the
// user beats an agent that is down, which beats running turns.
const (
	ActivityNeedsYou ActivityState = "needs_you" // an approval or clarify is waiting
	ActivityDown     ActivityState = "down"      // the agent is down or restarting
	ActivityWorking  ActivityState = "working"   // at least one turn runs
	ActivityIdle     ActivityState = "idle"
)

// DefaultActivityDebounce is how long WatchActivity gathers events before it
// recomputes the activity: 200 ms.
const DefaultActivityDebounce = 200 * time.Millisecond

// activityPoll is how often WatchActivity recomputes without an event, to catch changes
// that send no frame (an approval answered locally before the agent confirms it). It
// polls only while a turn runs or something waits for the user: an idle app (nothing
// running, nothing waiting) changes only through the events activityTrigger names, so
// it does no work until one comes (issue 24, item 6).
const activityPoll = 2 * time.Second

// activityPolled is called on each poll of WatchActivity (tests count them).
var activityPolled = func() {}

// needsPoll reports whether a changes in ways no event announces: a turn runs or an
// approval or clarify waits.
func (a Activity) needsPoll() bool { return len(a.Running) > 0 || a.Waiting > 0 }

// RunningTurn is one turn running in this process, as the tray lists it. A background
// task's turn or a side question's runs in a hidden session: ParentSessionID is then
// the session to open (and TaskID the task, for a background task).
type RunningTurn struct {
	SessionID       string `json:"session_id"`
	ParentSessionID string `json:"parent_session_id"` // "" for a session's own turn
	TaskID          string `json:"task_id"`           // "" unless a background task
	Title           string `json:"title"`             // the session's title, "" when it has none yet
	StreamID        string `json:"stream_id"`
	StartedAt       int64  `json:"started_at"` // epoch milliseconds
	Approvals       int    `json:"approvals"`  // approvals waiting in this session
	Clarifies       int    `json:"clarifies"`  // clarifies (plain and vault) waiting in this session
	// FullAccess: the chat's commands run outside the sandbox (its policy is full
	// access); the tray marks it.
	FullAccess bool `json:"full_access"`
}

// Activity summarises what the tray and desktop notifications need: the turns running,
// what waits for the user and the agent's status.
type Activity struct {
	State   ActivityState `json:"state"`
	Running []RunningTurn `json:"running"` // oldest first; never null
	Waiting int           `json:"waiting"` // approvals plus clarifies waiting, all sessions
	// FullAccess counts the running turns whose commands run outside the sandbox.
	FullAccess int `json:"full_access"`
	// Sidecar is the first started runtime whose sidecar is down or restarting (a chat
	// in use cannot reach its agent), else the built-in runtime's.
	Sidecar supervisor.Status `json:"sidecar"`
}

// Activity computes the current activity. Session titles come from the store; a title
// that cannot be read is left empty.
func (area *AboutArea) Activity(ctx context.Context) Activity {
	s := area.s
	a := Activity{Running: []RunningTurn{}, Sidecar: s.Sidecar.Status()}
	for _, st := range s.core.RuntimeStatuses() {
		if st.State == supervisor.StateDown || st.State == supervisor.StateRestarting {
			a.Sidecar = st
			break
		}
	}
	q := s.Runner.Pending()
	for _, l := range s.Runner.LiveStreams() {
		rt := RunningTurn{SessionID: l.SessionID, StreamID: l.StreamID, StartedAt: l.StartedAt}
		if sess, err := s.Store.GetSession(ctx, l.SessionID); err == nil {
			rt.Title = sess.Title
			if sess.Hidden {
				rt.ParentSessionID = sess.ParentID
			}
		}
		rt.TaskID, _, _ = s.Tasks.TaskOfSession(l.SessionID)
		_, rt.Approvals, _ = q.Head(l.SessionID, pending.KindApproval)
		_, rt.Clarifies, _ = q.Head(l.SessionID, pending.KindClarify)
		a.Waiting += rt.Approvals + rt.Clarifies
		if sb, err := s.Agents().GetSessionSandbox(ctx, l.SessionID); err == nil && sb.Mode == protocol.SandboxFullAccess {
			rt.FullAccess = true
			a.FullAccess++
		}
		a.Running = append(a.Running, rt)
	}
	a.State = activityState(a.Sidecar.State, len(a.Running), a.Waiting)
	return a
}

func activityState(sidecar supervisor.State, running, waiting int) ActivityState {
	switch {
	case waiting > 0:
		return ActivityNeedsYou
	case sidecar == supervisor.StateDown || sidecar == supervisor.StateRestarting:
		return ActivityDown
	case running > 0:
		return ActivityWorking
	}
	return ActivityIdle
}

// activityTrigger reports whether ev can change the activity: the sidecar's status,
// the session list, background tasks, and the frames that start or end a turn, add or settle an
// approval or clarify, or rename a session. Token frames and the like do not.
func activityTrigger(ev bus.Event) bool {
	switch ev.Name {
	case bus.EventSidecarStatus, bus.EventSessionsChanged, bus.EventBackgroundTasks:
		return true
	case bus.EventFrame:
		f, ok := ev.Payload.(turn.Frame)
		if !ok {
			return false
		}
		switch f.Event {
		case protocol.EvUserMessage, protocol.EvApproval, protocol.EvApprovalResolved,
			protocol.EvClarify, protocol.EvClarifyResolved, protocol.EvTitle, protocol.EvStreamEnd:
			return true
		}
	}
	return false
}

// WatchActivity publishes EventActivity with the current Activity once at the start
// and then each time it changes. Events that can change it (see activityTrigger) are
// gathered for debounce (DefaultActivityDebounce when 0) before one recompute; while a
// turn runs or something waits, a slow poll (activityPoll) also catches changes no event
// announces. Idle, it does nothing until an event comes. It returns a function that stops watching
// and waits for the watcher to end; calling it again is a no-op.
func (area *AboutArea) WatchActivity(debounce time.Duration) (stop func()) {
	s := area.s
	if debounce <= 0 {
		debounce = DefaultActivityDebounce
	}
	kick := make(chan struct{}, 1)
	unsub := s.Bus.Subscribe(func(ev bus.Event) {
		if ev.Name == EventActivity || !activityTrigger(ev) {
			return
		}
		select {
		case kick <- struct{}{}:
		default:
		}
	})
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var last *Activity
		// The poll's ticker runs only while the last activity needs it (needsPoll).
		var poller *time.Ticker
		var poll <-chan time.Time
		defer func() {
			if poller != nil {
				poller.Stop()
			}
		}()
		publish := func() {
			a := s.About().Activity(context.Background())
			switch {
			case a.needsPoll() && poller == nil:
				poller = time.NewTicker(activityPoll)
				poll = poller.C
			case !a.needsPoll() && poller != nil:
				poller.Stop()
				poller, poll = nil, nil
			}
			if last != nil && reflect.DeepEqual(*last, a) {
				return
			}
			last = &a
			s.Bus.Publish(bus.Event{Name: EventActivity, Payload: a})
		}
		publish()
		for {
			select {
			case <-quit:
				return
			case <-poll:
				activityPolled()
			case <-kick:
				t := time.NewTimer(debounce)
				select {
				case <-quit:
					t.Stop()
					return
				case <-t.C:
				}
				select { // events during the wait are covered by this recompute
				case <-kick:
				default:
				}
			}
			publish()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			unsub()
			close(quit)
			<-done
		})
	}
}

// Notice is a desktop notification: a short title and body naming the session. It
// never carries model text, commands or secrets.
type Notice struct {
	Title     string `json:"title"`
	Body      string `json:"body"`
	SessionID string `json:"session_id"`
	StreamID  string `json:"stream_id"`
}

// noticeTitleMax is the most characters of a session title a notice quotes.
const noticeTitleMax = 48

// NoticeFor returns the notification frame f deserves when nobody is looking at the
// window, and false when it deserves none: an approval, a clarify or a secret request
// that starts waiting, and a turn that finished or failed. A cancelled turn was
// stopped by the user (or by quitting) and gets none. sessionTitle is the session's
// title ("" when it has none).
func NoticeFor(f turn.Frame, sessionTitle string) (Notice, bool) {
	where := quoteTitle(sessionTitle)
	n := Notice{SessionID: f.SessionID, StreamID: f.StreamID}
	switch f.Event {
	case protocol.EvApproval:
		n.Title, n.Body = "Talaria needs your approval", "A command in "+where+" waits for your approval."
	case protocol.EvClarify:
		var cd struct {
			Kind string `json:"kind"`
		}
		_ = json.Unmarshal(f.Data, &cd)
		if cd.Kind == protocol.ClarifyKindVault {
			n.Title, n.Body = "Talaria needs a secret", "The agent in "+where+" asks for a secret."
		} else {
			n.Title, n.Body = "Talaria has a question", "The agent in "+where+" asks you a question."
		}
	case protocol.EvDone:
		n.Title, n.Body = "Turn finished", "The agent finished in "+where+"."
	case protocol.EvAppError:
		var ae turn.AppError
		_ = json.Unmarshal(f.Data, &ae)
		n.Title, n.Body = "Turn failed", "The turn in "+where+" failed"
		if l := shorten(ae.Label, 40); l != "" {
			n.Body += ": " + l
		}
		n.Body += "."
	default:
		return Notice{}, false
	}
	return n, true
}

// NoticeForFrame is NoticeFor with the frame's session looked up. A frame of a
// background task's hidden session is told as the task's (TaskNoticeFor) and opens
// the parent session; a side question raises none (its panel shows it), nor does a
// session that no longer exists.
func (area *AboutArea) NoticeForFrame(ctx context.Context, f turn.Frame) (Notice, bool) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, f.SessionID)
	if err != nil {
		return Notice{}, false
	}
	if !sess.Hidden {
		return NoticeFor(f, sess.Title)
	}
	taskID, _, ok := s.Tasks.TaskOfSession(sess.ID)
	if !ok {
		return Notice{}, false
	}
	t, err := s.Store.Task(ctx, taskID)
	if err != nil {
		return Notice{}, false
	}
	parentTitle := ""
	if p, err := s.Store.GetSession(ctx, t.ParentSessionID); err == nil {
		parentTitle = p.Title
	}
	return TaskNoticeFor(f, t.Prompt, parentTitle, t.ParentSessionID)
}

// taskPromptMax is the most characters of a task's prompt a notice quotes.
const taskPromptMax = 60

// TaskNoticeFor returns the notification a frame of a background task's turn deserves
// (see NoticeFor): the task finished or failed, or it waits for an approval, an answer
// or a secret. prompt is the task's prompt (its first words are quoted), parentTitle
// the parent session's title; the notice opens parentSessionID.
func TaskNoticeFor(f turn.Frame, prompt, parentTitle, parentSessionID string) (Notice, bool) {
	what := "“" + shorten(prompt, taskPromptMax) + "”"
	n := Notice{SessionID: parentSessionID, StreamID: f.StreamID}
	switch f.Event {
	case protocol.EvDone:
		n.Title, n.Body = "Background task finished", what
	case protocol.EvAppError:
		var ae turn.AppError
		_ = json.Unmarshal(f.Data, &ae)
		n.Title, n.Body = "Background task failed", what
		if l := shorten(ae.Label, 40); l != "" {
			n.Body += ": " + l
		}
	case protocol.EvApproval, protocol.EvClarify:
		base, ok := NoticeFor(f, parentTitle)
		if !ok {
			return Notice{}, false
		}
		n.Title, n.Body = base.Title, "Background task "+what+" of "+quoteTitle(parentTitle)+" is waiting for you."
	default:
		return Notice{}, false
	}
	return n, true
}

func quoteTitle(title string) string {
	t := shorten(title, noticeTitleMax)
	if t == "" {
		return "an untitled chat"
	}
	return "“" + t + "”"
}

// shorten folds whitespace and cuts s to at most max characters (with an ellipsis).
func shorten(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return strings.TrimRight(string([]rune(s)[:max-1]), " .,;:") + "…"
}
