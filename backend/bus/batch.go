package bus

import (
	"sync"
	"time"
)

// EventFrames is what the window receives in place of EventFrame: frames in publish
// order, oldest first (payload []any, each a Frame). Frames of every session travel in
// one batch; the window routes each by its session_id.
const EventFrames = "frames"

// FrameBatchInterval is how long the window's batcher lets a streaming frame wait (the
// frontend renders a streaming answer at most every 200 ms, lib/stream.svelte.ts
// LIVE_MS, so the wait is half of that at most).
const FrameBatchInterval = 100 * time.Millisecond

// Batcher forwards a bus's events to a consumer for which each delivery is costly and
// the count matters more than the size: the window, where Wails delivers each runtime
// event as one script evaluated in the web process (a streaming answer's text frames
// come 20 a second). Frames for which wait is true (text deltas, turn.StreamingFrame)
// are gathered and delivered together, one EventFrames event per interval at most;
// any other frame goes at once, in an EventFrames event after the gathered ones; any
// other event goes at once too, after the gathered frames. So the consumer sees the
// bus's order, and only the frames that wait can be overtaken by what does not go
// through the bus (a bound call's result). A frame published when none was delivered
// for an interval goes at once (a turn's first token waits for nothing). Only those
// deliveries and the timer's start the interval; a delivery another frame or event
// caused leaves it as it is. So the first token after the user's message, or after a
// tool that ran longer than the interval, goes at once, and frames that do not wait,
// however many, do not make the text's own deliveries more frequent than the interval
// (each of theirs carries the text gathered before it, to keep the order).
//
// Subscribe Publish to a Bus; call Stop when the consumer goes. emit is called with the
// Batcher's lock held, one call at a time, from the publisher's goroutine or the
// Batcher's timer.
type Batcher struct {
	emit  func(Event)
	wait  func(Event) bool
	every time.Duration

	mu      sync.Mutex
	pending []any
	last    time.Time // when the pace last delivered frames
	timer   *time.Timer
	stopped bool
}

// NewBatcher returns a Batcher that delivers the frame events for which wait is true
// to emit at most once per every (FrameBatchInterval for the window; every <= 0 or a
// nil wait delivers each frame at once), and every other event at once.
func NewBatcher(every time.Duration, wait func(Event) bool, emit func(Event)) *Batcher {
	return &Batcher{emit: emit, wait: wait, every: every}
}

// Publish takes one event from the bus (pass it to Bus.Subscribe).
func (b *Batcher) Publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	if ev.Name != EventFrame {
		b.flushLocked(false)
		b.emit(ev)
		return
	}
	b.pending = append(b.pending, ev.Payload)
	if b.wait == nil || !b.wait(ev) {
		b.flushLocked(false)
		return
	}
	if b.timer != nil {
		return // a delivery is due
	}
	wait := b.every - time.Since(b.last)
	if wait <= 0 {
		b.flushLocked(true)
		return
	}
	b.timer = time.AfterFunc(wait, b.Flush)
}

// Flush delivers the gathered frames now, if any (the timer calls it); the interval
// starts again.
func (b *Batcher) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped {
		b.flushLocked(true)
	}
}

// Stop drops the gathered frames and every later event: the consumer is going (a
// window being closed may no longer run the loop a delivery waits on).
func (b *Batcher) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	b.pending = nil
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
}

// flushLocked delivers the gathered frames; paced: the delivery starts the interval
// (one that another frame or event caused leaves it as it is).
func (b *Batcher) flushLocked(paced bool) {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.pending) == 0 {
		return
	}
	frames := b.pending
	b.pending = nil
	if paced {
		b.last = time.Now()
	}
	b.emit(Event{Name: EventFrames, Payload: frames})
}
