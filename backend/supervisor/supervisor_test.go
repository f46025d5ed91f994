package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
)

// The test binary doubles as a fake sidecar: with FAKE_SIDECAR=<mode> it speaks the
// protocol on stdin/stdout. The real sidecar is exercised end to end in backend/.
func TestMain(m *testing.M) {
	if mode := os.Getenv("FAKE_SIDECAR"); mode != "" {
		os.Exit(fakeSidecar(mode))
	}
	os.Exit(m.Run())
}

func fakeSidecar(mode string) int {
	fmt.Fprintln(os.Stderr, "fake sidecar starting in mode", mode)
	if mode == "exit-at-once" {
		return 3
	}
	dec := protocol.NewDecoder(os.Stdin)
	enc := protocol.NewEncoder(os.Stdout)
	var wg sync.WaitGroup
	for {
		env, err := dec.Next()
		if err != nil {
			var le *protocol.LineError
			if errors.As(err, &le) {
				continue
			}
			wg.Wait()
			return 0
		}
		switch env.Method {
		case protocol.MethodHello:
			v := protocol.Version
			if mode == "bad-protocol" {
				v = 99
			}
			_ = enc.Reply(env.ID, protocol.HelloResult{Protocol: v, SidecarVersion: "fake", Runtime: "fake", AgentVersion: "0"})
		case protocol.MethodPing:
			if mode == "hang-ping" {
				continue // never answer
			}
			_ = enc.Reply(env.ID, protocol.PingResult{OK: true})
		case "test.frames":
			// Three frames, some garbage, then the result.
			for i := 1; i <= 3; i++ {
				_ = enc.Notify(protocol.MethodFrame, protocol.FrameParams{ID: env.ID, Seq: int64(i), Event: "token", Data: json.RawMessage(fmt.Sprintf(`{"text":"%d"}`, i))})
				if i == 2 {
					os.Stdout.WriteString("this is not json\n[1,2]\n")
				}
			}
			_ = enc.Reply(env.ID, map[string]int{"n": 3})
		case "test.malformed":
			// A reply with a readable id whose members have the wrong types.
			fmt.Fprintf(os.Stdout, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":\"oops\"}\n", env.ID)
		case "test.block":
			// A frame first says the request was read: a process killed before it read
			// one never got it, and the supervisor sends it to the restarted one.
			_ = enc.Notify(protocol.MethodFrame, protocol.FrameParams{ID: env.ID, Seq: 1, Event: "status", Data: json.RawMessage(`{}`)})
			id := env.ID
			wg.Add(1)
			go func() { defer wg.Done(); time.Sleep(time.Hour); _ = enc.Reply(id, nil) }()
		case "test.die":
			os.Exit(7)
		case protocol.MethodCancel:
		default:
			_ = enc.ReplyError(env.ID, protocol.NewError(protocol.CodeMethodNotFound, protocol.CondMethodNotFound, env.Method))
		}
	}
}

// fastConfig retries fast and pings often; the supervisor's own clocks that a stalled
// machine could outlast (a ping's answer, a (re)start a call waits for, how soon an
// exit counts as a quick failure) get the shared deadline, so only the test that is
// about one of them sets it short: a slow process is never taken for a hung one, a
// slow start never fails a call, and a process that exits at once always counts as a
// quick failure.
func fastConfig(mode string) Config {
	exe, _ := os.Executable()
	return Config{Command: exe, Args: []string{"-test.run=^$"}, Env: []string{"FAKE_SIDECAR=" + mode},
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 80 * time.Millisecond, PingInterval: 50 * time.Millisecond,
		PingTimeout: testwait.Timeout, ShutdownGrace: 500 * time.Millisecond, ReadyWait: testwait.Timeout,
		QuickFailure: testwait.Timeout, MaxQuickFailures: 3, HealthyAfter: time.Hour}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type statusLog struct {
	mu sync.Mutex
	s  []Status
}

func (l *statusLog) add(s Status) { l.mu.Lock(); l.s = append(l.s, s); l.mu.Unlock() }
func (l *statusLog) states() []State {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]State, len(l.s))
	for i, s := range l.s {
		out[i] = s.State
	}
	return out
}

func waitState(t *testing.T, s *Supervisor, want State) Status {
	t.Helper()
	var st Status
	if !testwait.Until(func() bool { st = s.Status(); return st.State == want }) {
		t.Fatalf("state %q not reached within %s; now %+v", want, testwait.Timeout, st)
	}
	return st
}

func alive(pid int) bool { return processAlive(pid) }

func TestCallsFramesAndMalformedOutput(t *testing.T) {
	s := New(fastConfig("normal"), quietLog())
	s.Start(context.Background())
	defer s.Shutdown(context.Background())
	st := waitState(t, s, StateReady)
	if st.Runtime != "fake" || st.PID == 0 {
		t.Fatalf("ready status = %+v", st)
	}
	var mu sync.Mutex
	var got []string
	var res map[string]int
	err := s.Call(context.Background(), "test.frames", nil, func(f protocol.FrameParams) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%d:%s", f.Seq, f.Data))
		mu.Unlock()
	}, &res)
	if err != nil {
		t.Fatal(err)
	}
	if want := `1:{"text":"1"} 2:{"text":"2"} 3:{"text":"3"}`; strings.Join(got, " ") != want {
		t.Fatalf("frames = %v, want %s", got, want)
	}
	if res["n"] != 3 {
		t.Fatalf("result = %v", res)
	}
	// A malformed reply whose id can be read ends its call at once (agent_incompatible).
	done := make(chan error, 1)
	go func() {
		done <- s.Call(context.Background(), "test.malformed", nil, func(protocol.FrameParams) {}, nil)
	}()
	err = testwait.Recv(t, done, "the call with a malformed reply to end")
	var me *protocol.Error
	if !errors.As(err, &me) || me.Condition() != protocol.CondAgentIncompatible {
		t.Fatalf("malformed reply: %v", err)
	}
	// Unknown method: the sidecar's error comes back typed.
	err = s.Call(context.Background(), "nope", nil, nil, nil)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Condition() != protocol.CondMethodNotFound {
		t.Fatalf("unknown method error = %v", err)
	}
}

func TestCrashFailsInFlightCallsAndRestarts(t *testing.T) {
	var log statusLog
	s := New(fastConfig("normal"), quietLog())
	s.OnStatus(log.add)
	s.Start(context.Background())
	defer s.Shutdown(context.Background())
	first := waitState(t, s, StateReady)

	// The process is killed once it has read the call (its frame says so), not after a
	// fixed wait: a call still in the pipe is sent to the restarted sidecar instead, and
	// test.block would then never end.
	errc := make(chan error, 1)
	read := make(chan struct{}, 1)
	go func() {
		errc <- s.Call(context.Background(), "test.block", nil, func(protocol.FrameParams) {
			select {
			case read <- struct{}{}:
			default:
			}
		}, nil)
	}()
	timer := time.NewTimer(testwait.Timeout)
	defer timer.Stop()
	select {
	case <-read:
	case err := <-errc:
		t.Fatalf("test.block ended before the kill: %v", err)
	case <-timer.C:
		t.Fatal("the sidecar never read test.block")
	}
	if err := killProcess(first.PID); err != nil {
		t.Fatal(err)
	}
	err := testwait.Recv(t, errc, "the in-flight call to fail after the sidecar died")
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Condition() != protocol.CondSidecarUnavailable {
		t.Fatalf("in-flight call error = %v, want sidecar_unavailable", err)
	}
	var second Status
	testwait.Until(func() bool { second = s.Status(); return second.State == StateReady && second.PID != first.PID })
	if second.PID == first.PID || second.Restarts < 1 {
		t.Fatalf("not restarted: first %+v second %+v", first, second)
	}
	sawRestarting := false
	for _, st := range log.states() {
		if st == StateRestarting {
			sawRestarting = true
		}
	}
	if !sawRestarting {
		t.Fatalf("states %v never showed restarting", log.states())
	}
	var pr protocol.PingResult
	if err := s.Call(context.Background(), protocol.MethodPing, nil, nil, &pr); err != nil || !pr.OK {
		t.Fatalf("call after restart: %v %+v", err, pr)
	}
}

func TestHungSidecarIsKilledAndRestarted(t *testing.T) {
	cfg := fastConfig("hang-ping")
	cfg.PingTimeout = 200 * time.Millisecond // the fake never answers a ping: a slow machine only detects it later
	s := New(cfg, quietLog())
	s.Start(context.Background())
	defer s.Shutdown(context.Background())
	first := waitState(t, s, StateReady)
	var st Status
	if !testwait.Until(func() bool { st = s.Status(); return st.State == StateReady && st.PID != first.PID }) {
		t.Fatalf("hung sidecar was not replaced: %+v", st)
	}
	if alive(first.PID) {
		t.Fatalf("hung process %d still alive after restart", first.PID)
	}
}

func TestCrashLoopStopsRetryingUntilRestart(t *testing.T) {
	var log statusLog
	s := New(fastConfig("exit-at-once"), quietLog())
	s.OnStatus(log.add)
	s.Start(context.Background())
	defer s.Shutdown(context.Background())
	st := waitState(t, s, StateDown)
	if !strings.Contains(st.Hint, "stopped retrying") || st.Error == "" {
		t.Fatalf("down status lacks error/hint: %+v", st)
	}
	// Back-off grows: attempts 1 and 2 were announced with growing delays.
	var delays []float64
	seen := map[int]bool{}
	log.mu.Lock()
	for _, x := range log.s {
		if x.State == StateRestarting && x.NextRetryS > 0 && !seen[x.Attempt] {
			seen[x.Attempt] = true
			delays = append(delays, x.NextRetryS)
		}
	}
	log.mu.Unlock()
	if len(delays) < 2 || delays[1] <= delays[0] {
		t.Fatalf("back-off delays = %v, want growing", delays)
	}
	err := s.Call(context.Background(), protocol.MethodPing, nil, nil, nil)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Condition() != protocol.CondSidecarUnavailable {
		t.Fatalf("call while down = %v", err)
	}
	if len(s.StderrTail()) == 0 || !strings.Contains(strings.Join(s.StderrTail(), "\n"), "fake sidecar starting") {
		t.Fatalf("stderr not captured: %q", s.StderrTail())
	}
}

func TestProtocolMismatchIsReported(t *testing.T) {
	s := New(fastConfig("bad-protocol"), quietLog())
	s.Start(context.Background())
	defer s.Shutdown(context.Background())
	st := waitState(t, s, StateDown)
	if !strings.Contains(st.Error, "protocol 99") {
		t.Fatalf("down status = %+v", st)
	}
}

func TestShutdownLeavesNoProcess(t *testing.T) {
	s := New(fastConfig("normal"), quietLog())
	s.Start(context.Background())
	st := waitState(t, s, StateReady)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if alive(st.PID) {
		t.Fatalf("sidecar %d alive after Shutdown", st.PID)
	}
	if got := s.Status().State; got != StateStopped {
		t.Fatalf("state after shutdown = %s", got)
	}
}

func TestMissingExecutable(t *testing.T) {
	cfg := fastConfig("normal")
	cfg.Command = "/nonexistent/talaria"
	s := New(cfg, quietLog())
	s.Start(context.Background())
	defer s.Shutdown(context.Background())
	st := waitState(t, s, StateDown)
	if !strings.Contains(st.Hint, "/nonexistent/talaria") {
		t.Fatalf("hint does not name the executable: %+v", st)
	}
}

func TestLineRing(t *testing.T) {
	r := NewLineRing(3)
	r.Write([]byte("a\nb\nc"))
	r.Write([]byte("c\nd\n"))
	if got := strings.Join(r.Lines(), ","); got != "b,cc,d" {
		t.Fatalf("lines = %q", got)
	}
}

// A held first launch (the desktop app holds it until its window has painted) goes when
// it is released, when a call needs the sidecar, or when the hold has passed; Shutdown
// during the hold leaves nothing behind.
func TestStartHeld(t *testing.T) {
	t.Run("until released", func(t *testing.T) {
		s := New(fastConfig("normal"), quietLog())
		launch := make(chan struct{})
		s.StartHeld(context.Background(), launch, time.Hour)
		defer s.Shutdown(context.Background())
		// A negative over time (nothing announces "still held"): a slow machine can
		// only make it pass.
		time.Sleep(300 * time.Millisecond)
		if st := s.Status(); st.State != StateStarting || st.PID != 0 {
			t.Fatalf("held: status %+v, want starting without a process", st)
		}
		close(launch)
		waitState(t, s, StateReady)
	})
	t.Run("a call needs it", func(t *testing.T) {
		s := New(fastConfig("normal"), quietLog())
		s.StartHeld(context.Background(), make(chan struct{}), time.Hour)
		defer s.Shutdown(context.Background())
		var res map[string]int
		if err := s.Call(context.Background(), "test.frames", nil, func(protocol.FrameParams) {}, &res); err != nil || res["n"] != 3 {
			t.Fatalf("call during the hold: %v %v", res, err)
		}
	})
	t.Run("the hold passes", func(t *testing.T) {
		s := New(fastConfig("normal"), quietLog())
		s.StartHeld(context.Background(), nil, 100*time.Millisecond)
		defer s.Shutdown(context.Background())
		waitState(t, s, StateReady)
	})
	t.Run("restart agent", func(t *testing.T) {
		s := New(fastConfig("normal"), quietLog())
		s.StartHeld(context.Background(), nil, time.Hour)
		defer s.Shutdown(context.Background())
		s.Restart()
		waitState(t, s, StateReady)
	})
	t.Run("shutdown while held", func(t *testing.T) {
		s := New(fastConfig("normal"), quietLog())
		s.StartHeld(context.Background(), nil, time.Hour)
		if err := s.Shutdown(testwait.Context(t)); err != nil {
			t.Fatalf("shutdown during the hold: %v", err)
		}
		if st := s.Status(); st.State != StateStopped || st.PID != 0 {
			t.Fatalf("after shutdown: %+v", st)
		}
	})
}

// A call made just after the sidecar died, before the supervisor noticed, never
// reached it: it is sent to the restarted sidecar instead of failing. (Before, one
// in seven such calls failed with "the agent process closed its output" or "broken
// pipe".) A call the dead process had already received still fails: see
// TestCrashFailsInFlightCallsAndRestarts.
func TestCallRightAfterACrashGoesToTheRestartedSidecar(t *testing.T) {
	cfg := fastConfig("normal")
	cfg.QuickFailure = time.Nanosecond // thirty crashes in a row are not a crash loop here
	s := New(cfg, quietLog())
	s.Start(context.Background())
	defer s.Shutdown(context.Background())
	for i := 0; i < 30; i++ {
		st := waitState(t, s, StateReady)
		if err := killProcess(st.PID); err != nil {
			t.Fatal(err)
		}
		// Wait for the process to be dead (its stdin closed), not for the
		// supervisor to see it.
		// Polled every millisecond (testwait polls every 10): the call must come
		// before the supervisor notices, so as soon as the process is dead.
		for deadline := time.Now().Add(testwait.Timeout); !processExited(st.PID); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: process %d still alive %s after SIGKILL", i, st.PID, testwait.Timeout)
			}
		}
		var pr protocol.PingResult
		if err := s.Call(context.Background(), protocol.MethodPing, nil, nil, &pr); err != nil || !pr.OK {
			t.Fatalf("round %d: a call right after the crash: %v", i, err)
		}
		if now := s.Status(); now.PID == st.PID {
			t.Fatalf("round %d: answered by the dead process %d", i, st.PID)
		}
	}
}
