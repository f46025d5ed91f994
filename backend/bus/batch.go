package bus

import (
	"sync"
	"time"
)

// EventFrames is what the window receives in place of EventFrame: the frames published
// since the last delivery, oldest first (payload []any, each a Frame). Frames of every
// session travel in one batch; the window routes each by its session_id.
const EventFrames = "frames"

// FrameBatchInterval is how long the window's batcher gathers frames before it delivers
// them (the frontend paints a streaming answer at most every 150 ms, lib/stream.svelte.ts
// LIVE_MS, so a frame waits at most a third of that).
const FrameBatchInterval = 100 * time.Millisecond

// Batcher forwards a bus's events to a consumer for which each delivery is costly and
// the count matters more than the size: the window, where Wails delivers each runtime
// event as one script evaluated in the web process (a streaming answer publishes a frame
// per token, tens a second). Frame events are gathered into one EventFrames event per
// interval; every other event is delivered at once, after the frames published before
// it, so the consumer sees the bus's order. A frame published when none was delivered
// for an interval goes at once (a lone approval or the first token waits for nothing).
//
// Subscribe Publish to a Bus; call Stop when the consumer goes. emit is called with the
// Batcher's lock held, one call at a time, from the publisher's goroutine or the
// Batcher's timer.
type Batcher struct {
	emit  func(Event)
	every time.Duration

	mu      sync.Mutex
	pending []any
	last    time.Time // when frames were last delivered
	timer   *time.Timer
	stopped bool
}

// NewBatcher returns a Batcher that delivers gathered frames to emit at most once per
// every (FrameBatchInterval for the window; every <= 0 delivers each frame at once).
func NewBatcher(every time.Duration, emit func(Event)) *Batcher {
	return &Batcher{emit: emit, every: every}
}

// Publish takes one event from the bus (pass it to Bus.Subscribe).
func (b *Batcher) Publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	if ev.Name != EventFrame {
		b.flushLocked()
		b.emit(ev)
		return
	}
	b.pending = append(b.pending, ev.Payload)
	if b.timer != nil {
		return // a delivery is due
	}
	wait := b.every - time.Since(b.last)
	if wait <= 0 {
		b.flushLocked()
		return
	}
	b.timer = time.AfterFunc(wait, b.Flush)
}

// Flush delivers the gathered frames now, if any.
func (b *Batcher) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped {
		b.flushLocked()
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

func (b *Batcher) flushLocked() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.pending) == 0 {
		return
	}
	frames := b.pending
	b.pending = nil
	b.last = time.Now()
	b.emit(Event{Name: EventFrames, Payload: frames})
}
