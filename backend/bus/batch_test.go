package bus

import (
	"reflect"
	"sync"
	"testing"
	"time"
)

// recorder keeps what a Batcher emits.
type recorder struct {
	mu  sync.Mutex
	got []Event
	ch  chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 1000)} }

func (r *recorder) emit(ev Event) {
	r.mu.Lock()
	r.got = append(r.got, ev)
	r.mu.Unlock()
	r.ch <- struct{}{}
}

func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.got...)
}

// frame is a frame event; a negative n is one that does not wait (not a text delta).
func frame(n int) Event { return Event{Name: EventFrame, Payload: n} }

func waits(ev Event) bool { n, ok := ev.Payload.(int); return ok && n >= 0 }

func TestBatcherGathersFramesAndKeepsTheBusOrder(t *testing.T) {
	r := newRecorder()
	b := NewBatcher(time.Hour, waits, r.emit) // the timer never fires within the test
	b.Publish(frame(1))                       // none delivered yet: at once
	b.Publish(frame(2))
	b.Publish(frame(3))
	if got := r.events(); !reflect.DeepEqual(got, []Event{{EventFrames, []any{1}}}) {
		t.Fatalf("after three frames: %v; want the first alone, the others gathered", got)
	}
	b.Publish(Event{Name: EventSessionsChanged})
	b.Publish(frame(4))
	b.Flush()
	b.Flush() // nothing gathered: nothing sent
	want := []Event{
		{EventFrames, []any{1}},
		{EventFrames, []any{2, 3}}, // before the event published after them
		{EventSessionsChanged, nil},
		{EventFrames, []any{4}},
	}
	if got := r.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	// A frame that does not wait (an approval) goes at once, after the gathered ones.
	// That delivery leaves the interval as it was: the frame after it waits.
	b.Publish(frame(7))
	b.Publish(frame(-1))
	b.Publish(frame(8))
	want = append(want, Event{EventFrames, []any{7, -1}})
	if got := r.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("a frame that does not wait: got %v\nwant %v", got, want)
	}
	b.Flush()
	want = append(want, Event{EventFrames, []any{8}})
	b.Publish(frame(5))
	b.Stop()
	b.Publish(frame(6))
	b.Publish(Event{Name: EventSessionsChanged})
	b.Flush()
	if got := r.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Stop must drop what was gathered and what follows: got %v", got)
	}
}

// A frame that does not wait (the user's message, a tool's call or result) neither
// starts the interval nor ends it: the turn's first token after the user's message goes
// at once, the first after a tool that ran past the interval too, and frames that do
// not wait do not make the text's deliveries more frequent.
func TestBatcherFirstTokenAfterAFrameThatDoesNotWaitGoesAtOnce(t *testing.T) {
	r := newRecorder()
	b := NewBatcher(time.Hour, waits, r.emit) // the timer never fires within the test
	defer b.Stop()
	b.Publish(frame(-1)) // the user's message
	b.Publish(frame(1))  // the first token
	b.Publish(frame(2))  // within the interval of the first token's delivery: waits
	want := []Event{{EventFrames, []any{-1}}, {EventFrames, []any{1}}}
	if got := r.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	b.Publish(frame(-2)) // a tool's call: goes at once, after the waiting token
	b.Publish(frame(-3)) // its result, at once
	b.Publish(frame(3))  // still within the interval: waits
	want = append(want, Event{EventFrames, []any{2, -2}}, Event{EventFrames, []any{-3}})
	if got := r.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	b.Flush()
	want = append(want, Event{EventFrames, []any{3}})
	// A tool that ran past the interval: the first token after its result goes at once.
	b.Publish(frame(-4))
	b.mu.Lock()
	b.last = time.Now().Add(-2 * time.Hour)
	b.mu.Unlock()
	b.Publish(frame(-5))
	b.Publish(frame(4))
	b.Publish(frame(5)) // waits
	want = append(want, Event{EventFrames, []any{-4}}, Event{EventFrames, []any{-5}}, Event{EventFrames, []any{4}})
	if got := r.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestBatcherDeliversGatheredFramesWhenTheIntervalEnds(t *testing.T) {
	r := newRecorder()
	b := NewBatcher(20*time.Millisecond, waits, r.emit)
	defer b.Stop()
	// A frame within the interval of the last delivery waits for the timer. Under load
	// the publish may come after the interval (then it goes at once): try again until
	// a frame is left waiting, so the timer's delivery is what is tested.
	for n := 1; ; n++ {
		b.mu.Lock()
		b.last = time.Now()
		b.mu.Unlock()
		b.Publish(frame(n))
		b.mu.Lock()
		armed := b.timer != nil && len(b.pending) == 1
		b.mu.Unlock()
		if armed {
			break
		}
		<-r.ch
	}
	select {
	case <-r.ch:
	case <-time.After(time.Minute):
		t.Fatalf("the gathered frame was never delivered: %v", r.events())
	}
	got := r.events()
	if last := got[len(got)-1]; last.Name != EventFrames || len(last.Payload.([]any)) != 1 {
		t.Fatalf("the timer delivered %v, want the one waiting frame", last)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil || len(b.pending) != 0 {
		t.Fatalf("after the delivery: timer %v, pending %v", b.timer, b.pending)
	}
}

// Many publishers (turns of several sessions) and the timer at once: every frame is
// delivered once, each publisher's in its order. Run with -race.
func TestBatcherUnderConcurrentPublishers(t *testing.T) {
	r := newRecorder()
	r.ch = make(chan struct{}, 1<<16)
	b := NewBatcher(50*time.Microsecond, waits, r.emit)
	const publishers, each = 4, 500
	var wg sync.WaitGroup
	for p := 0; p < publishers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				b.Publish(frame(p*each + i))
				if i%100 == 0 {
					b.Publish(Event{Name: EventSessionsChanged})
				}
			}
		}(p)
	}
	wg.Wait()
	b.Flush()
	b.Stop()
	next := make([]int, publishers)
	count := 0
	for _, ev := range r.events() {
		if ev.Name != EventFrames {
			continue
		}
		if len(ev.Payload.([]any)) == 0 {
			t.Fatal("an empty batch was delivered")
		}
		for _, v := range ev.Payload.([]any) {
			n := v.(int)
			p, i := n/each, n%each
			if i != next[p] {
				t.Fatalf("publisher %d: frame %d arrived where %d was due", p, i, next[p])
			}
			next[p]++
			count++
		}
	}
	if count != publishers*each {
		t.Fatalf("%d frames delivered, want %d", count, publishers*each)
	}
}
