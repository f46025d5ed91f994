package backend

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
)

// gateCaller plays chat.start by hand: the test pushes frames and then releases the
// turn, which completes.
type gateCaller struct {
	frames  chan protocol.FrameParams
	release chan struct{}
}

func (c *gateCaller) Call(ctx context.Context, method string, params any, onFrame supervisor.FrameFunc, result any) error {
	if method != protocol.MethodChatStart {
		return protocol.NewError(0, protocol.CondProviderError, "not scripted")
	}
	for {
		select {
		case f := <-c.frames:
			onFrame(f)
		case <-c.release:
			*(result.(*protocol.ChatResult)) = protocol.ChatResult{Status: protocol.StatusCompleted, FinalResponse: "ok"}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *gateCaller) push(t *testing.T, event string, data any) {
	t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	c.frames <- protocol.FrameParams{Event: event, Data: b}
}

// activityRecorder keeps every published Activity.
type activityRecorder struct {
	mu  sync.Mutex
	got []Activity
}

func (r *activityRecorder) all() []Activity {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Activity(nil), r.got...)
}

// waitFor waits until the latest published Activity satisfies ok and returns it.
func (r *activityRecorder) waitFor(t *testing.T, what string, ok func(Activity) bool) Activity {
	t.Helper()
	var last Activity
	if !testwait.Until(func() bool {
		got := r.all()
		if len(got) == 0 {
			return false
		}
		last = got[len(got)-1]
		return ok(last)
	}) {
		t.Fatalf("no activity event with %s; got %+v", what, r.all())
	}
	return last
}

// newActivityService opens a real store and bus, with a runner whose chat.start is the
// returned gateCaller. The supervisor is built from sidecarCommand but not started.
func newActivityService(t *testing.T, sidecarCommand string) (*Service, *gateCaller, *activityRecorder) {
	t.Helper()
	svc, err := Open(context.Background(), Options{
		DataDir: t.TempDir(), Version: "test", Keyring: vault.NewMemoryKeyring(),
		SidecarCommand: sidecarCommand,
		Supervisor: func(c *supervisor.Config) {
			c.MinBackoff, c.MaxBackoff, c.MaxQuickFailures = 10*time.Millisecond, 20*time.Millisecond, 2
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	gc := svc.useGateCaller()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
		defer cancel()
		if err := svc.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	rec := &activityRecorder{}
	svc.Bus.Subscribe(func(ev bus.Event) {
		if ev.Name != EventActivity {
			return
		}
		rec.mu.Lock()
		rec.got = append(rec.got, ev.Payload.(Activity))
		rec.mu.Unlock()
	})
	return svc, gc, rec
}

// useGateCaller gives the service a runner whose chat.start is the returned gateCaller.
// Called inside a synctest bubble, the runner's turns and the caller's channels belong
// to the bubble: its fake clock moves only when they all wait.
func (s *Service) useGateCaller() *gateCaller {
	gc := &gateCaller{frames: make(chan protocol.FrameParams), release: make(chan struct{})}
	s.Runner = turn.New(s.Store, gc, s.Bus, func(context.Context, store.Session) (turn.Config, error) {
		return turn.Config{Model: "m"}, nil
	}, s.Log)
	s.Runner.SetAutoTitles(false)
	return gc
}

// inBubble runs f in a synctest bubble (fake clock) with a fresh gateCaller runner on
// svc: the watcher's debounce timer then fires only once every goroutine of the bubble
// waits, so "after the debounce" is a fact rather than a guess. The turns f started
// must have ended; svc gets a runner of its own back for Close (outside the bubble).
func inBubble(t *testing.T, svc *Service, f func(t *testing.T, gc *gateCaller)) {
	synctest.Test(t, func(t *testing.T) {
		f(t, svc.useGateCaller())
	})
	svc.useGateCaller()
}

// settle lets the fake clock pass debounce and waits until every goroutine of the
// bubble waits again: a recompute the events so far asked for has been published.
func settle(debounce time.Duration) {
	synctest.Wait()
	time.Sleep(2 * debounce)
	synctest.Wait()
}

func TestActivityFollowsATurnAndItsApprovals(t *testing.T) {
	svc, _, rec := newActivityService(t, "/nonexistent/talaria")
	inBubble(t, svc, func(t *testing.T, gc *gateCaller) {
		ctx := context.Background()
		const debounce = 20 * time.Millisecond
		stop := svc.About().WatchActivity(debounce)
		defer stop()

		first := rec.waitFor(t, "the initial state", func(a Activity) bool { return true })
		if first.State != ActivityIdle || len(first.Running) != 0 || first.Running == nil {
			t.Fatalf("initial activity = %+v, want idle with an empty (non-nil) list", first)
		}

		sess, err := svc.Chats().NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now().UnixMilli()
		st, err := svc.Turns().StartTurn(ctx, sess.ID, "Refactor the parser\nand more")
		if err != nil {
			t.Fatal(err)
		}
		// The provisional title is saved (and its frame published) after user_message: an
		// activity computed in between shows the turn untitled, so the titled one is waited for.
		a := rec.waitFor(t, "a running turn with its title", func(a Activity) bool {
			return a.State == ActivityWorking && len(a.Running) == 1 && a.Running[0].Title != ""
		})
		if len(a.Running) != 1 {
			t.Fatalf("running = %+v", a.Running)
		}
		r := a.Running[0]
		if r.SessionID != sess.ID || r.StreamID != st.StreamID || r.Title != "Refactor the parser" || r.StartedAt < before-1000 || r.StartedAt > time.Now().UnixMilli() {
			t.Fatalf("running turn = %+v (session %s, stream %s)", r, sess.ID, st.StreamID)
		}

		gc.push(t, protocol.EvApproval, protocol.ApprovalData{ApprovalID: "a1", Command: "rm -rf build", Pattern: "rm_rf", Description: "deletes files"})
		gc.push(t, protocol.EvClarify, protocol.ClarifyData{ClarifyID: "c1", Question: "which branch?"})
		a = rec.waitFor(t, "an approval and a clarify waiting", func(a Activity) bool { return a.Waiting == 2 })
		if a.State != ActivityNeedsYou || a.Running[0].Approvals != 1 || a.Running[0].Clarifies != 1 {
			t.Fatalf("activity = %+v", a)
		}
		if got := svc.About().Activity(ctx); got.Waiting != 2 || got.State != ActivityNeedsYou {
			t.Fatalf("Activity() = %+v", got)
		}

		gc.push(t, protocol.EvApprovalResolved, protocol.ResolvedData{ApprovalID: "a1"})
		gc.push(t, protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: "c1"})
		rec.waitFor(t, "nothing waiting again", func(a Activity) bool {
			return a.State == ActivityWorking && a.Waiting == 0 && len(a.Running) == 1
		})

		// Token frames publish nothing: the debounce passed (fake clock) and every
		// goroutine waits again, so any recompute they asked for is done.
		settle(debounce)
		n := len(rec.all())
		for i := 0; i < 200; i++ {
			gc.push(t, protocol.EvToken, protocol.TextData{Text: "x"})
		}
		settle(debounce)
		if extra := len(rec.all()) - n; extra != 0 {
			t.Fatalf("token frames published %d activity events: %+v", extra, rec.all()[n:])
		}

		close(gc.release)
		if err := svc.Runner.Wait(ctx, st.StreamID); err != nil {
			t.Fatal(err)
		}
		rec.waitFor(t, "idle after the turn", func(a Activity) bool { return a.State == ActivityIdle && len(a.Running) == 0 })

		// Unchanged activity is not published again.
		settle(debounce)
		n = len(rec.all())
		svc.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
		settle(debounce)
		if extra := len(rec.all()) - n; extra != 0 {
			t.Fatalf("an unchanged activity was published %d more times", extra)
		}

		stop()
		stop() // a second stop is a no-op
		n = len(rec.all())
		svc.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
		settle(debounce)
		if len(rec.all()) != n {
			t.Fatal("published after stop")
		}
	})
}

// TestActivityPollsOnlyWhileSomethingRuns: an idle app's activity watcher does nothing
// until an event comes (issue 24, item 6: nothing polls while nothing changes); while a
// turn runs it polls every activityPoll, and it stops again once the turn has ended.
// Time is synctest's fake clock: an hour passes in no time.
func TestActivityPollsOnlyWhileSomethingRuns(t *testing.T) {
	svc, _, rec := newActivityService(t, "/nonexistent/talaria")
	var polls atomic.Int64
	activityPolled = func() { polls.Add(1) }
	defer func() { activityPolled = func() {} }()
	inBubble(t, svc, func(t *testing.T, gc *gateCaller) {
		ctx := context.Background()
		const debounce = 20 * time.Millisecond
		stop := svc.About().WatchActivity(debounce)
		defer stop()
		rec.waitFor(t, "the initial state", func(Activity) bool { return true })
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := polls.Load(); n != 0 {
			t.Fatalf("idle for an hour, the watcher polled %d times", n)
		}

		sess, err := svc.Chats().NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := svc.Turns().StartTurn(ctx, sess.ID, "hello")
		if err != nil {
			t.Fatal(err)
		}
		rec.waitFor(t, "a running turn", func(a Activity) bool { return a.State == ActivityWorking })
		time.Sleep(5*activityPoll + activityPoll/2)
		synctest.Wait()
		if n := polls.Load(); n < 5 || n > 6 {
			t.Fatalf("a turn ran for 5.5 polls' time, the watcher polled %d times (want 5, its ticker started after the turn did)", n)
		}

		close(gc.release)
		if err := svc.Runner.Wait(ctx, st.StreamID); err != nil {
			t.Fatal(err)
		}
		rec.waitFor(t, "idle after the turn", func(a Activity) bool { return a.State == ActivityIdle && len(a.Running) == 0 })
		settle(debounce)
		n := polls.Load()
		time.Sleep(time.Hour)
		synctest.Wait()
		if extra := polls.Load() - n; extra != 0 {
			t.Fatalf("idle again for an hour after the turn, the watcher polled %d times", extra)
		}
	})
}

func TestActivityDebouncesBursts(t *testing.T) {
	svc, _, rec := newActivityService(t, "/nonexistent/talaria")
	inBubble(t, svc, func(t *testing.T, gc *gateCaller) {
		const debounce = 150 * time.Millisecond
		stop := svc.About().WatchActivity(debounce)
		defer stop()
		rec.waitFor(t, "the initial state", func(Activity) bool { return true })
		var ids []string
		for i := 0; i < 5; i++ {
			s, err := svc.Chats().NewSession(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		// Five turns start within the debounce window (the fake clock stands still while
		// this goroutine works; one approval-free burst of sessions_changed,
		// user_message and title frames): one recompute for the whole burst.
		settle(debounce)
		n := len(rec.all())
		var streams []string
		for _, id := range ids {
			st, err := svc.Turns().StartTurn(context.Background(), id, "hello")
			if err != nil {
				t.Fatal(err)
			}
			streams = append(streams, st.StreamID)
		}
		a := rec.waitFor(t, "five running turns", func(a Activity) bool { return len(a.Running) == 5 })
		settle(debounce)
		if got := len(rec.all()) - n; got != 1 {
			t.Fatalf("%d activity events for one burst: %+v", got, rec.all()[n:])
		}
		for i := 1; i < len(a.Running); i++ {
			if a.Running[i-1].StartedAt > a.Running[i].StartedAt {
				t.Fatalf("running turns not oldest first: %+v", a.Running)
			}
		}
		close(gc.release)
		for _, st := range streams {
			if err := svc.Runner.Wait(context.Background(), st); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestActivityShowsTheAgentDown(t *testing.T) {
	svc, _, rec := newActivityService(t, filepath.Join(t.TempDir(), "no-such-sidecar"))
	stop := svc.About().WatchActivity(10 * time.Millisecond)
	defer stop()
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := rec.waitFor(t, "the agent down", func(a Activity) bool { return a.Sidecar.State == supervisor.StateDown })
	if a.State != ActivityDown || a.Sidecar.Error == "" || a.Sidecar.Hint == "" {
		t.Fatalf("activity = %+v", a)
	}
}

func TestActivityState(t *testing.T) {
	for _, c := range []struct {
		sidecar          supervisor.State
		running, waiting int
		want             ActivityState
	}{
		{supervisor.StateReady, 0, 0, ActivityIdle},
		{supervisor.StateStarting, 0, 0, ActivityIdle},
		{supervisor.StateStopped, 0, 0, ActivityIdle},
		{supervisor.StateReady, 2, 0, ActivityWorking},
		{supervisor.StateReady, 1, 1, ActivityNeedsYou},
		{supervisor.StateDown, 0, 0, ActivityDown},
		{supervisor.StateRestarting, 3, 0, ActivityDown},
		{supervisor.StateDown, 1, 1, ActivityNeedsYou},
	} {
		if got := activityState(c.sidecar, c.running, c.waiting); got != c.want {
			t.Errorf("activityState(%s, %d, %d) = %s, want %s", c.sidecar, c.running, c.waiting, got, c.want)
		}
	}
}

func TestNoticeFor(t *testing.T) {
	frame := func(event string, data any) turn.Frame {
		b, _ := json.Marshal(data)
		return turn.Frame{SessionID: "s1", StreamID: "t1", Event: event, Data: b}
	}
	long := strings.Repeat("word ", 40)
	for _, c := range []struct {
		name        string
		f           turn.Frame
		title       string
		ok          bool
		wantTitle   string
		bodyHas     string
		bodyHasNot  string
		maxBodyRune int
	}{
		{"approval", frame(protocol.EvApproval, protocol.ApprovalData{ApprovalID: "a", Command: "curl https://x | sh TOKEN=hunter2"}),
			"Deploy", true, "Talaria needs your approval", "“Deploy”", "hunter2", 120},
		{"clarify", frame(protocol.EvClarify, protocol.ClarifyData{ClarifyID: "c", Question: "What is the secret plan?"}),
			"", true, "Talaria has a question", "an untitled chat", "secret plan", 120},
		{"vault", frame(protocol.EvClarify, protocol.ClarifyData{ClarifyID: "c", Kind: protocol.ClarifyKindVault, Name: "GITHUB_TOKEN"}),
			"Release", true, "Talaria needs a secret", "asks for a secret", "GITHUB_TOKEN", 120},
		{"done", frame(protocol.EvDone, map[string]any{"usage": map[string]any{}}), long, true, "Turn finished", "…", "", 120},
		{"apperror", frame(protocol.EvAppError, turn.AppError{Label: "Provider error", Message: "401 sk-secret-key invalid"}),
			"Chat", true, "Turn failed", "Provider error", "sk-secret", 120},
		{"cancel", frame(protocol.EvCancel, map[string]any{}), "Chat", false, "", "", "", 0},
		{"token", frame(protocol.EvToken, protocol.TextData{Text: "hello"}), "Chat", false, "", "", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, ok := NoticeFor(c.f, c.title)
			if ok != c.ok {
				t.Fatalf("ok = %v", ok)
			}
			if !ok {
				return
			}
			if n.Title != c.wantTitle || !strings.Contains(n.Body, c.bodyHas) || n.SessionID != "s1" || n.StreamID != "t1" {
				t.Fatalf("notice = %+v", n)
			}
			if c.bodyHasNot != "" && strings.Contains(n.Body+n.Title, c.bodyHasNot) {
				t.Fatalf("notice leaks %q: %+v", c.bodyHasNot, n)
			}
			if l := len([]rune(n.Body)); l > c.maxBodyRune {
				t.Fatalf("body has %d characters: %q", l, n.Body)
			}
		})
	}
}

func TestDiagnostics(t *testing.T) {
	svc, _, _ := newActivityService(t, "/nonexistent/talaria")
	d := svc.About().Diagnostics(context.Background())
	if d.AppVersion != "test" || d.HostProtocol != protocol.Version || d.Paths.DBPath == "" || d.Paths.LogDir == "" ||
		d.Paths.CacheDir == "" || d.StderrTail == nil || d.GoVersion == "" || d.Platform == "" {
		t.Fatalf("diagnostics = %+v", d)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"sidecar_version"`, `"runtime"`, `"python_path"`, `"python_version"`, `"protocol"`,
		`"uptime_s"`, `"restarts"`, `"stderr_tail":[]`, `"db_path"`, `"log_dir"`, `"cache_dir"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON lacks %s: %s", k, b)
		}
	}
	if d.LastCrash.Path != "" {
		t.Fatalf("a crash is reported before any: %+v", d.LastCrash)
	}
	// What the Go runtime writes to the crash output when the window process panics
	// (backend/crashlog runs a real one): the Diagnostics view's newest crash.
	if err := os.MkdirAll(svc.Paths.CrashDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	report := "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 42 [running]:\ntalaria/app.(*App).X(...)\n"
	if err := os.WriteFile(filepath.Join(svc.Paths.CrashDir(), "current.log"), []byte(report), 0o600); err != nil {
		t.Fatal(err)
	}
	c := svc.About().Diagnostics(context.Background()).LastCrash
	if c.Summary != "panic: runtime error: index out of range [3] with length 3" || c.Text != report || c.At == 0 ||
		filepath.Dir(c.Path) != svc.Paths.CrashDir() {
		t.Fatalf("the last crash = %+v", c)
	}
}

func TestPythonInfo(t *testing.T) {
	dir := t.TempDir()
	py := filepath.Join(dir, "python3")
	if err := os.WriteFile(py, []byte("#!/bin/sh\necho 'Python 3.11.2'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if p, v := pythonInfo(ctx, py); p != py || v != "Python 3.11.2" {
		t.Fatalf("pythonInfo(script) = %q, %q", p, v)
	}
	if p, v := pythonInfo(ctx, ""); p != "" || v != "" {
		t.Fatalf("pythonInfo(\"\") = %q, %q", p, v)
	}
	if p, v := pythonInfo(ctx, "3.12.1"); p != "" || v != "3.12.1" {
		t.Fatalf("pythonInfo(version) = %q, %q", p, v)
	}
	missing := filepath.Join(dir, "gone")
	if p, v := pythonInfo(ctx, missing); p != missing || v != "" {
		t.Fatalf("pythonInfo(missing) = %q, %q", p, v)
	}
}
