package drivers

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"talaria/backend/bus"
	"talaria/backend/firstscreen"
	"talaria/bench/procstat"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The window benchmarks: `talaria --selftest --scenario bench-start|bench-window`, run
// by bench/webkit (make bench) under Xvfb beside a bare Wails app. They drive the real
// window and backend and read timings back from the page (benchjs/instrument.js,
// injected with WindowExecJS, answering through runtime events) and the web process's
// CPU time and memory from /proc. Every figure is printed on stdout as one line
// `BENCH {json}`; nothing is asserted.

//go:embed benchjs/instrument.js
var benchInstrument string

// BenchStreamTokens is how many paced tokens each streaming phase of bench-window sends:
// 30 s of them, enough for the 20 s CPU window and the keystrokes after it.
const BenchStreamTokens = 1500

// benchTokenGap is the pace of those tokens (a model at 50 tokens/s).
const benchTokenGap = 20 * time.Millisecond

type benchReply struct {
	ID    string          `json:"id"`
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value"`
}

// benchDriver calls the instrument's functions and reads the web process.
type benchDriver struct {
	s   *scenario
	ctx context.Context

	mu      sync.Mutex
	seq     int
	pending map[string]chan benchReply
	webPID  int
}

// emitBench prints one result line.
func emitBench(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println("BENCH " + string(b))
}

func newBenchDriver(ctx context.Context, s *scenario) (*benchDriver, error) {
	d := &benchDriver{s: s, ctx: ctx, pending: map[string]chan benchReply{}}
	runtime.EventsOn(ctx, "bench:result", func(data ...any) {
		if len(data) == 0 {
			return
		}
		b, _ := json.Marshal(data[0])
		var r benchReply
		if json.Unmarshal(b, &r) != nil {
			return
		}
		d.mu.Lock()
		ch := d.pending[r.ID]
		delete(d.pending, r.ID)
		d.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	})
	ready := make(chan struct{}, 1)
	runtime.EventsOn(ctx, "bench:ready", func(...any) {
		select {
		case ready <- struct{}{}:
		default:
		}
	})
	runtime.WindowExecJS(ctx, benchInstrument)
	select {
	case <-ready:
	case <-time.After(15 * time.Second):
		return nil, errors.New("bench: the instrument did not load")
	}
	// TALARIA_BENCH_INJECT: a script run in the page before measuring (experiments).
	if js := os.Getenv("TALARIA_BENCH_INJECT"); js != "" {
		runtime.WindowExecJS(ctx, js)
	}
	pid, err := procstat.WebProcess(os.Getpid(), 10*time.Second)
	if err != nil {
		return nil, err
	}
	d.webPID = pid
	return d, nil
}

// call runs instrument function fn(args...) in the page and decodes its answer into out.
func (d *benchDriver) call(out any, timeout time.Duration, fn string, args ...any) error {
	d.mu.Lock()
	d.seq++
	id := strconv.Itoa(d.seq)
	ch := make(chan benchReply, 1)
	d.pending[id] = ch
	d.mu.Unlock()
	if args == nil {
		args = []any{}
	}
	runtime.EventsEmit(d.ctx, "bench:call", map[string]any{"id": id, "fn": fn, "args": args})
	select {
	case r := <-ch:
		if !r.OK {
			var msg string
			_ = json.Unmarshal(r.Value, &msg)
			return fmt.Errorf("bench %s: %s", fn, msg)
		}
		if out != nil {
			return json.Unmarshal(r.Value, out)
		}
		return nil
	case <-time.After(timeout):
		d.mu.Lock()
		delete(d.pending, id)
		d.mu.Unlock()
		return fmt.Errorf("bench %s: no answer within %s", fn, timeout)
	}
}

func (d *benchDriver) web() procstat.Sample {
	s, err := procstat.Read(d.webPID)
	if err != nil {
		d.s.svc.Log.Warn("bench: reading the web process", "err", err)
	}
	return s
}

// cpuOver returns the web process's CPU seconds spent while fn runs.
func (d *benchDriver) cpuOver(fn func() error) (float64, error) {
	before := d.web()
	err := fn()
	after := d.web()
	return (after.CPU - before.CPU).Seconds(), err
}

// scenarioBenchStart waits for the window's first painted sidebar, then its first chat
// painted, and prints their epoch ms (bench/webkit subtracts the launch time), the page's start-up timeline
// (navigation timing and marks, for the log), then the web process's memory; with
// TALARIA_BENCH_SIDEBAR=1 it also scrolls the sidebar to its end.
func (s *scenario) scenarioBenchStart(ctx context.Context) error {
	d, err := newBenchDriver(ctx, s)
	if err != nil {
		return err
	}
	var t int64
	if err := d.call(&t, 60*time.Second, "mark", "talaria:sidebar", 60_000); err != nil {
		return err
	}
	emitBench(map[string]any{"event": "sidebar", "t": t})
	// The first chat on screen (the last chat's newest rows, or a fresh folder's empty
	// chat): a start whose sidebar painted but whose chat never did is a failure of the
	// run (issue 24, item 1: WebKitGTK once left it blank in 3 of 18 starts).
	var chat int64
	if err := d.call(&chat, 60*time.Second, "mark", "talaria:chat", 60_000); err != nil {
		return fmt.Errorf("the sidebar painted but the first chat did not (a blank chat area): %w", err)
	}
	emitBench(map[string]any{"event": "chat", "t": chat})
	// When the page came with the first-screen picture (backend/firstscreen), the chat
	// above is the picture's paint; the live chat drawn in its place is reported too.
	var live int64
	if err := d.call(&live, 2*time.Second, "mark", "talaria:chat-live", 1_500); err == nil {
		emitBench(map[string]any{"event": "chat_live", "t": live})
	}
	// TALARIA_BENCH_FIRST_SCREEN=1 (the first start of a data folder in the benchmark):
	// wait until the window has kept its picture, so the next starts are served it.
	if os.Getenv("TALARIA_BENCH_FIRST_SCREEN") == "1" {
		shot := filepath.Join(s.svc.Paths.DataDir, firstscreen.FileName)
		for end := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(shot); err == nil {
				break
			}
			if time.Now().After(end) {
				return fmt.Errorf("the window kept no first-screen picture within 20 s (%s)", shot)
			}
		}
	}
	var timing map[string]any
	if err := d.call(&timing, 5*time.Second, "timing"); err == nil {
		timing["event"] = "timing"
		emitBench(timing)
	}
	time.Sleep(2 * time.Second)
	emitBench(map[string]any{"event": "memory", "webview_rss": d.web().RSS})
	if os.Getenv("TALARIA_BENCH_SIDEBAR") == "1" {
		var reach struct {
			Sessions int       `json:"sessions"`
			Frames   []float64 `json:"frames"`
		}
		if err := d.call(&reach, 200*time.Second, "sidebarReach", 180_000); err != nil {
			return err
		}
		listed, err := s.svc.Store.ListSessions(ctx, 0, 0) // what the sidebar lists
		if err != nil {
			return err
		}
		emitBench(map[string]any{"event": "sidebar_reach", "sessions": reach.Sessions, "listed": len(listed), "frame_p50": pctl(reach.Frames, 0.5), "frame_p95": pctl(reach.Frames, 0.95)})
	}
	return nil
}

// scenarioBenchWindow measures, in one window: opening a 5,000-message chat against a
// 2-message one, a short turn in each, a streamed answer's updates, CPU and keystroke
// latency at 1 KB and at 100 KB, the CPU while the agent works and prints nothing, the
// CPU of the whole app over a minute with nothing happening (benchQuiet), and the
// memory kept per streamed turn, with full collections in the web process
// (benchMemoryPerTurn) and with none anywhere over 500 turns (benchMemoryNoGC).
func (s *scenario) scenarioBenchWindow(ctx context.Context, p *providertest.Server) error {
	d, err := newBenchDriver(ctx, s)
	if err != nil {
		return err
	}
	emitBench(map[string]any{"event": "start", "webview_rss": d.web().RSS})
	// The streamed answer and the idle window first, on a page that has held no other
	// chat but the quiet minute's two messages: they measure the answer's cost, not a page grown by the turns below (after
	// the memory benchmark's 400 turns the same answer read 2.9 and 4.4 CPU-s per 1,000
	// tokens, against 2.2-2.3 on its own). Then the memory per turn: its 200 warm-up
	// turns collect what the long answer left behind before the first reading. All of
	// it before the page holds a 5,000-message chat.
	// TALARIA_BENCH_ONLY=stream|memory|idle|quiet|nogc|open runs one part (experiments).
	switch only := os.Getenv("TALARIA_BENCH_ONLY"); only {
	case "", "open":
	case "memory":
		return s.benchMemoryPerTurn(ctx, d, p)
	case "stream":
		if err := s.benchStream(ctx, d, p, false); err != nil {
			return err
		}
		return s.benchStream(ctx, d, p, true)
	case "idle":
		return s.benchIdle(ctx, d, p)
	case "quiet":
		return s.benchQuiet(ctx, d)
	case "nogc":
		return s.benchMemoryNoGC(ctx, d, p)
	default:
		return fmt.Errorf("TALARIA_BENCH_ONLY=%q: set it to stream, memory, idle, quiet, nogc or open, or leave it unset for every part", only)
	}
	// TALARIA_BENCH_ONLY=open runs only what follows: opening chats and a turn in each.
	if os.Getenv("TALARIA_BENCH_ONLY") != "open" {
		// The quiet minute comes before the streams: this process is the host and also
		// the scripted provider and this driver, and after the two 1 MB answers below
		// their garbage was still being swept and returned for a minute (host 0.41 and
		// window 0.39 CPU-s over the quiet minute, against 0.02 and 0.04 measured alone,
		// same machine, 2026-12-04). Idle is what an app that has shown a chat spends.
		// So does the silent turn, for the same reason: after the streams, the idle span
		// beside it read 0.5 % of a core and the silent turn 1.4-2.0 %, against 0.1 % and
		// 0.4 % in a window that had streamed nothing (three runs each, 2026-12-05; 0.0-0.1
		// % of it with the activity indicator stopped).
		// TALARIA_BENCH_SKIP_QUIET=1: bench/webkit measures the quiet minute in runs of
		// its own, interleaved with the bare app's (TALARIA_BENCH_ONLY=quiet).
		if os.Getenv("TALARIA_BENCH_SKIP_QUIET") != "1" {
			if err := s.benchQuiet(ctx, d); err != nil {
				return err
			}
		}
		if err := s.benchIdle(ctx, d, p); err != nil {
			return err
		}
		if err := s.benchStream(ctx, d, p, false); err != nil {
			return err
		}
		if err := s.benchStream(ctx, d, p, true); err != nil {
			return err
		}
		if err := s.benchMemoryPerTurn(ctx, d, p); err != nil {
			return err
		}
		if err := s.benchMemoryNoGC(ctx, d, p); err != nil {
			return err
		}
	}
	long, err := s.seedChat(ctx, "Long chat", 5000, "END-OF-LONG-CHAT")
	if err != nil {
		return err
	}
	short, err := s.seedChat(ctx, "Short chat", 2, "END-OF-SHORT-CHAT")
	if err != nil {
		return err
	}
	empty, err := s.seedChat(ctx, "Empty chat", 2, "READY-EMPTY-CHAT")
	if err != nil {
		return err
	}
	s.svc.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	time.Sleep(time.Second)
	if err := d.call(nil, 10*time.Second, "open", empty, "READY-EMPTY-CHAT", 10_000); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)

	// Opening: click to painted, alternating, three times each; memory of the first.
	type opened struct {
		MS       float64 `json:"ms"`
		Elements int     `json:"elements"`
	}
	var openLong, openShort []float64
	var elemsLong int
	var rssGrow int64
	for i := range 3 {
		for _, c := range []struct {
			id, token string
			into      *[]float64
		}{{short, "END-OF-SHORT-CHAT", &openShort}, {long, "END-OF-LONG-CHAT", &openLong}} {
			before := d.web().RSS
			var o opened
			if err := d.call(&o, 90*time.Second, "open", c.id, c.token, 80_000); err != nil {
				return err
			}
			*c.into = append(*c.into, o.MS)
			time.Sleep(1500 * time.Millisecond)
			if c.id == long && i == 0 {
				elemsLong = o.Elements
				rssGrow = d.web().RSS - before
			}
			if err := d.call(nil, 30*time.Second, "open", empty, "READY-EMPTY-CHAT", 20_000); err != nil {
				return err
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	emitBench(map[string]any{"event": "open", "long_ms": median(openLong), "short_ms": median(openShort),
		"long_all": openLong, "short_all": openShort, "long_elements": elemsLong, "long_rss_growth": rssGrow})

	// One short turn in each chat: the web process's CPU from StartTurn to the re-read rows.
	// A chat reopens at its end: what is waited for is its newest answer (older rows are
	// off screen, so not in the DOM).
	var turnLong, turnShort []float64
	newest := map[string]string{short: "END-OF-SHORT-CHAT", long: "END-OF-LONG-CHAT"}
	for i := range 5 {
		for _, c := range []struct {
			id   string
			into *[]float64
		}{{short, &turnShort}, {long, &turnLong}} {
			if err := d.call(nil, 90*time.Second, "open", c.id, newest[c.id], 80_000); err != nil {
				return err
			}
			time.Sleep(1500 * time.Millisecond)
			answer := fmt.Sprintf("TURN-%d-%s", i, c.id[:8])
			// About 100 tokens 20 ms apart: a short answer as a model streams it.
			chunks := []providertest.Chunk{}
			for _, t := range splitTokens(BenchAnswer(300), 100) {
				chunks = append(chunks, providertest.Chunk{Text: t, Delay: benchTokenGap})
			}
			chunks = append(chunks, providertest.Chunk{Text: "\n\n" + answer})
			p.Enqueue(providertest.Turn{Chunks: chunks})
			cpu, err := d.cpuOver(func() error {
				if _, err := s.waitFrame(c.id, protocol.EvStreamEnd, func() error { _, err := s.bound.Turns.StartTurn(c.id, "A short question"); return err }); err != nil {
					return err
				}
				if err := d.call(nil, 60*time.Second, "shown", answer, 50_000); err != nil {
					return err
				}
				time.Sleep(time.Second)
				return nil
			})
			if err != nil {
				return err
			}
			*c.into = append(*c.into, cpu)
			newest[c.id] = answer
		}
	}
	emitBench(map[string]any{"event": "turn", "long_cpu_s": median(turnLong), "short_cpu_s": median(turnShort), "long_all": turnLong, "short_all": turnShort})
	return nil
}

// benchStream streams one long answer in two paced phases (at about 1 KB, then past
// 100 KB), each BenchStreamTokens tokens 20 ms apart, with keystrokes typed into the
// composer during each. code: the answer is one fenced code block instead (the worst
// realistic answer), and its second phase is past 1 MB; its phases are named code1k and
// code1m.
func (s *scenario) benchStream(ctx context.Context, d *benchDriver, p *providertest.Server, code bool) error {
	title, ready, size, names := "Streaming", "READY-STREAMING", 100<<10, [2]string{"1k", "100k"}
	if code {
		title, ready, size, names = "Streaming code", "READY-STREAMING-CODE", 1<<20, [2]string{"code1k", "code1m"}
	}
	sid, err := s.seedChat(ctx, title, 2, ready)
	if err != nil {
		return err
	}
	s.svc.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	time.Sleep(time.Second)
	if err := d.call(nil, 30*time.Second, "open", sid, ready, 20_000); err != nil {
		return err
	}
	text := BenchAnswer(size + 8<<10) // room for BenchStreamTokens 4-byte tokens past size
	if code {
		text = BenchCodeAnswer(size + 8<<10)
	}
	head := text[:1024]
	tokA := splitTokens(text[1024:], BenchStreamTokens)
	restA := len(strings.Join(tokA, ""))
	mid := text[1024+restA : size]
	tokB := splitTokens(text[size:], BenchStreamTokens)
	goA, goMid, goB := make(chan struct{}), make(chan struct{}), make(chan struct{})
	chunks := []providertest.Chunk{{Text: head}}
	for i, t := range tokA {
		c := providertest.Chunk{Text: t, Delay: benchTokenGap}
		if i == 0 {
			c = providertest.Chunk{Text: t, Wait: goA}
		}
		chunks = append(chunks, c)
	}
	chunks = append(chunks, providertest.Chunk{Text: mid, Wait: goMid})
	for i, t := range tokB {
		c := providertest.Chunk{Text: t, Delay: benchTokenGap}
		if i == 0 {
			c = providertest.Chunk{Text: t, Wait: goB}
		}
		chunks = append(chunks, c)
	}
	p.Enqueue(providertest.Turn{Chunks: chunks})
	lenA := len(head) + restA
	total := lenA + len(mid) + len(strings.Join(tokB, ""))
	if err := d.call(nil, 60*time.Second, "watch", sid, total); err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() {
		_, err := s.waitFrameWithin(sid, protocol.EvStreamEnd, 10*time.Minute, func() error { _, err := s.bound.Turns.StartTurn(sid, "Write the long report"); return err })
		ended <- err
	}()
	time.Sleep(2 * time.Second) // the head is shown

	type update [2]float64 // answer length (bytes), arrival to paint (ms)
	type updates struct {
		Updates []update `json:"updates"`
		N       int      `json:"n"`
		Len     int      `json:"len"`
		DoneAt  int64    `json:"doneAt"`
	}
	phase := func(name string, gate chan struct{}, from int) (int, error) {
		var keysPainted []map[string]float64
		var sent []int64
		close(gate)
		began := time.Now()
		time.Sleep(time.Second)
		// The web process's CPU over 20 s of streaming with nothing else going on, per
		// token streamed meanwhile (tokens are 4 bytes). Over 10 s (about 480 tokens) the
		// same build read from 2.3 to 4.8 CPU-s per 1,000 tokens on one day (2026-12-05).
		var at0, at1 updates
		_ = d.call(&at0, 60*time.Second, "updates", 1<<30)
		cpu, _ := d.cpuOver(func() error { time.Sleep(20 * time.Second); return nil })
		_ = d.call(&at1, 60*time.Second, "updates", 1<<30)
		tokens := float64(at1.Len-at0.Len) / 4
		// Then keystrokes into the composer while it streams on.
		if err := d.call(nil, 60*time.Second, "keys"); err != nil {
			return from, err
		}
		for range 25 {
			sent = append(sent, time.Now().UnixMilli())
			if out, err := exec.Command("xdotool", "type", "--delay", "0", "x").CombinedOutput(); err != nil {
				return from, fmt.Errorf("xdotool: %v: %s", err, out)
			}
			time.Sleep(300 * time.Millisecond)
		}
		if err := d.call(&keysPainted, 90*time.Second, "keysDone", 25, 60_000); err != nil {
			return from, err
		}
		// The rest of the phase's tokens, then a second for the last paint.
		if left := time.Duration(BenchStreamTokens)*benchTokenGap - time.Since(began); left > 0 {
			time.Sleep(left)
		}
		time.Sleep(time.Second)
		var u updates
		if err := d.call(&u, 60*time.Second, "updates", from); err != nil {
			return from, err
		}
		var durs []float64
		for _, x := range u.Updates {
			durs = append(durs, x[1])
		}
		var keyMS, keyLag []float64
		for i, k := range keysPainted {
			if i < len(sent) {
				keyMS = append(keyMS, k["painted"]-float64(sent[i]))
			}
			keyLag = append(keyLag, k["lag"])
		}
		lo, hi := 0, 0
		if len(u.Updates) > 0 {
			lo, hi = int(u.Updates[0][0]), int(u.Updates[len(u.Updates)-1][0])
		}
		emitBench(map[string]any{"event": "stream", "phase": name, "from_bytes": lo, "to_bytes": hi, "updates": len(durs),
			"update_p50": pctl(durs, 0.5), "update_p95": pctl(durs, 0.95), "cpu_s": cpu, "tokens": tokens,
			"keys": len(keyMS), "key_p50": pctl(keyMS, 0.5), "key_p95": pctl(keyMS, 0.95), "key_max": pctl(keyMS, 1),
			"key_event_p95": pctl(keyLag, 0.95), "done_at": u.DoneAt})
		return u.N, nil
	}
	n, err := phase(names[0], goA, 0)
	if err != nil {
		return err
	}
	close(goMid)
	time.Sleep(3 * time.Second) // the jump to 100 KB is rendered
	var u struct {
		N int `json:"n"`
	}
	_ = d.call(&u, 60*time.Second, "updates", n)
	bStart := time.Now().UnixMilli()
	if _, err := phase(names[1], goB, u.N); err != nil {
		return err
	}
	if err := <-ended; err != nil {
		return err
	}
	var fin updates
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := d.call(&fin, 60*time.Second, "updates", fin.N); err != nil || fin.DoneAt != 0 {
			break
		}
	}
	if code {
		return d.call(nil, 60*time.Second, "unwatch")
	}
	emitBench(map[string]any{"event": "stream_last", "tokens": BenchStreamTokens, "answer_bytes": total,
		"shown_bytes": fin.Len, "wall_ms": fin.DoneAt - bStart, "paced_ms": (time.Duration(BenchStreamTokens) * benchTokenGap).Milliseconds()})
	return d.call(nil, 60*time.Second, "unwatch")
}

// benchIdle measures the web process's CPU share over 8 s with nothing running, then
// while a turn waits for its first token (the agent works and prints nothing).
func (s *scenario) benchIdle(ctx context.Context, d *benchDriver, p *providertest.Server) error {
	sid, err := s.seedChat(ctx, "Waiting", 2, "READY-WAITING")
	if err != nil {
		return err
	}
	s.svc.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	time.Sleep(time.Second)
	if err := d.call(nil, 30*time.Second, "open", sid, "READY-WAITING", 20_000); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	const span = 8 * time.Second
	idle, _ := d.cpuOver(func() error { time.Sleep(span); return nil })
	p.Enqueue(providertest.Turn{HangAfter: true})
	started, err := s.bound.Turns.StartTurn(sid, "Think about it")
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	working, _ := d.cpuOver(func() error { time.Sleep(span); return nil })
	_, err = s.waitFrame(sid, protocol.EvStreamEnd, func() error { return s.bound.Turns.Cancel(started.StreamID) })
	emitBench(map[string]any{"event": "idle", "idle_core": idle / span.Seconds(), "working_core": working / span.Seconds()})
	return err
}

// benchMemoryPerTurn runs short turns in one chat (TALARIA_BENCH_WARMUP to warm up,
// default 200, then TALARIA_BENCH_TURNS measured, default 200) and reports the web
// process's resident memory growth per measured turn.
func (s *scenario) benchMemoryPerTurn(ctx context.Context, d *benchDriver, p *providertest.Server) error {
	sid, err := s.seedChat(ctx, "Many turns", 2, "READY-MANY-TURNS")
	if err != nil {
		return err
	}
	s.svc.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	time.Sleep(time.Second)
	if err := d.call(nil, 30*time.Second, "open", sid, "READY-MANY-TURNS", 20_000); err != nil {
		return err
	}
	turnOnce := func(i int) error {
		token := fmt.Sprintf("MEM-%d-DONE", i)
		p.Enqueue(providertest.TextTurn("Here is ", "a short ", "answer with some **markdown** and `code`: ", token))
		if _, err := s.waitFrame(sid, protocol.EvStreamEnd, func() error { _, err := s.bound.Turns.StartTurn(sid, "Turn "+strconv.Itoa(i)); return err }); err != nil {
			return err
		}
		return d.call(nil, 30*time.Second, "shown", token, 20_000)
	}
	// Warm up: the page's memory grows while its caches fill and then levels off; what
	// each turn keeps is measured after that. Among them is JavaScriptCore's cache of
	// evaluated scripts (up to 2,000; every event and bound-call result Wails delivers is
	// one, about 16 a turn here), full after some 125 turns. Measured in one 600-turn
	// run after 40 warm-up turns (least squares over each third): 63 KiB a turn over
	// the first 200, 32 over the next 200, 27 over the last. TALARIA_BENCH_WARMUP sets
	// the number (default 200).
	warm, err := benchEnvInt("TALARIA_BENCH_WARMUP", 200, 0)
	if err != nil {
		return err
	}
	for i := range warm {
		if err := turnOnce(i); err != nil {
			return err
		}
	}
	// A full collection before each reading: through WebKit's remote inspector
	// (Heap.gc) when the benchmark opened one (TALARIA_BENCH_INSPECTOR=host:port, the
	// address WebKitGTK's WEBKIT_INSPECTOR_HTTP_SERVER serves), else whatever the page
	// has ($vm.gc, absent in WebKitGTK's release build).
	var insp *benchInspector
	if addr := os.Getenv("TALARIA_BENCH_INSPECTOR"); addr != "" {
		var err error
		if insp, err = dialBenchInspector(addr); err != nil {
			return err
		}
		defer insp.close()
	}
	// The web process's resident memory once it is quiet: the smallest of several
	// samples after a pause (JSC collects and returns pages on idle timers), so a
	// collection still pending does not count as memory kept; and, with the
	// inspector, the live JavaScript heap, from a heap snapshot before the first
	// resident reading and one after the last. Only those two: serialising a snapshot
	// allocates tens of MiB in the web process, which are the benchmark's, not the
	// page's, and must not land between two resident readings.
	collected := true
	var heaps []float64
	var firstClasses, lastClasses map[string]heapClass
	heapReading := func() {
		if insp == nil {
			return
		}
		if hb, classes, err := insp.heapBytes(); err == nil {
			heaps = append(heaps, float64(hb))
			if firstClasses == nil {
				firstClasses = classes
			}
			lastClasses = classes
		}
	}
	settled := func() int64 {
		if insp != nil {
			if err := insp.gc(); err != nil {
				collected = false
			}
		} else {
			var gc bool
			_ = d.call(&gc, 30*time.Second, "gc")
			collected = collected && gc
		}
		time.Sleep(4 * time.Second)
		least := int64(math.MaxInt64)
		for range 6 {
			if rss := d.web().RSS; rss > 0 && rss < least {
				least = rss
			}
			time.Sleep(500 * time.Millisecond)
		}
		return least
	}
	// The memory kept per turn: the slope of the settled memory sampled every 20 turns
	// over 200 turns (least squares), steadier than two readings that each move by a
	// few MiB with the heap's timers: over 100 turns a reading's ±2 MiB is ±20 KiB a
	// turn, as much as half the goal.
	n, err := benchEnvInt("TALARIA_BENCH_TURNS", 200, 20)
	if err != nil {
		return err
	}
	var elBefore, elAfter int
	_ = d.call(&elBefore, 5*time.Second, "elements")
	if os.Getenv("TALARIA_BENCH_SUMMARY") != "" {
		var sum map[string]any
		_ = d.call(&sum, 5*time.Second, "summary")
		emitBench(map[string]any{"event": "summary", "summary": sum})
	}
	heapReading()
	xs, ys := []float64{0}, []float64{float64(settled())}
	for i := range n {
		if err := turnOnce(warm + i); err != nil {
			return err
		}
		if i%20 == 19 {
			xs, ys = append(xs, float64(i+1)), append(ys, float64(settled()))
		}
	}
	heapReading()
	_ = d.call(&elAfter, 5*time.Second, "elements")
	// TALARIA_BENCH_HEAPSNAPSHOT=file: the last heap snapshot, for finding what keeps
	// memory (experiments; WebKit's Inspector snapshot format).
	if f := os.Getenv("TALARIA_BENCH_HEAPSNAPSHOT"); f != "" && insp != nil {
		if data, err := insp.snapshot(); err == nil {
			_ = os.WriteFile(f, []byte(data), 0o600)
		}
	}
	mib := make([]int64, len(ys))
	for k, y := range ys {
		mib[k] = int64(y) >> 20
	}
	ev := map[string]any{"event": "memory_turn", "turns": n, "warmup": warm, "rss_before": ys[0], "rss_after": ys[len(ys)-1], "per_turn": slope(xs, ys),
		"elements_before": elBefore, "elements_after": elAfter, "samples_mib": mib, "collected": collected}
	if len(heaps) == 2 {
		kib := make([]int64, len(heaps))
		for k, h := range heaps {
			kib[k] = int64(h) >> 10
		}
		ev["heap_per_turn"], ev["heap_samples_kib"] = (heaps[1]-heaps[0])/float64(n), kib
		ev["heap_growth"] = heapGrowth(firstClasses, lastClasses, 15)
	}
	emitBench(ev)
	return nil
}
