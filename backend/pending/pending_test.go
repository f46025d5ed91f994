package pending

import (
	"errors"
	"sync"
	"testing"
)

func TestQueueHeadCountAndStale(t *testing.T) {
	q := New()
	if n := q.Add("s", Item{Kind: KindApproval, ID: "a1", StreamID: "x"}); n != 1 {
		t.Fatalf("count %d", n)
	}
	q.Add("s", Item{Kind: KindApproval, ID: "a2", StreamID: "x"})
	q.Add("s", Item{Kind: KindClarify, ID: "c1", StreamID: "x"})
	q.Add("other", Item{Kind: KindApproval, ID: "a9", StreamID: "y"})
	if h, n, ok := q.Head("s", KindApproval); !ok || h.ID != "a1" || n != 2 {
		t.Fatalf("head %v %d %v", h, n, ok)
	}
	// An answer for another session's id, another kind, or twice is stale.
	for _, c := range []struct{ sess, kind, id string }{{"s", KindApproval, "a9"}, {"s", KindClarify, "a1"}, {"s", KindApproval, "nope"}} {
		if _, err := q.Claim(c.sess, c.kind, c.id); !errors.Is(err, ErrStale) {
			t.Fatalf("Claim(%v) = %v, want stale", c, err)
		}
	}
	if _, err := q.Claim("s", KindApproval, "a1"); err != nil {
		t.Fatal(err)
	}
	q.Release("s", KindApproval, "a1", true)
	if _, err := q.Claim("s", KindApproval, "a1"); !errors.Is(err, ErrStale) {
		t.Fatal("second answer was not stale")
	}
	if n, ok := q.Resolve("s", KindApproval, "a2"); !ok || n != 0 {
		t.Fatalf("resolve %d %v", n, ok)
	}
	if d := q.DropStream("s", "x"); len(d) != 1 || d[0].ID != "c1" {
		t.Fatalf("dropped %v", d)
	}
	if _, _, ok := q.Head("other", KindApproval); !ok {
		t.Fatal("another session's item was dropped")
	}
}

func TestConcurrentAnswersSendOnce(t *testing.T) {
	q := New()
	q.Add("s", Item{Kind: KindApproval, ID: "a"})
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := q.Claim("s", KindApproval, "a"); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d answers taken, want 1", wins)
	}
}

// An answer claims its item while it is on its way: the item stays at the head of its
// queue, a second answer is refused, and only a delivered answer takes it out; one that
// did not arrive leaves it answerable again.
func TestClaimKeepsTheItemUntilDelivered(t *testing.T) {
	q := New()
	q.Add("s", Item{Kind: KindClarify, ID: "c1", StreamID: "x"})
	q.Add("s", Item{Kind: KindClarify, ID: "c2", StreamID: "x"})
	if _, err := q.Claim("s", KindClarify, "c1"); err != nil {
		t.Fatal(err)
	}
	if h, n, ok := q.Head("s", KindClarify); !ok || h.ID != "c1" || n != 2 {
		t.Fatalf("while answering: head %v, %d", h.ID, n)
	}
	if _, err := q.Peek("s", KindClarify, "c1"); err != nil {
		t.Fatalf("Peek while answering = %v", err)
	}
	if _, err := q.Claim("s", KindClarify, "c1"); !errors.Is(err, ErrStale) {
		t.Fatalf("a second answer while the first is sent = %v, want stale", err)
	}
	q.Release("s", KindClarify, "c1", false) // not delivered
	if _, err := q.Claim("s", KindClarify, "c1"); err != nil {
		t.Fatalf("answering again after a failed delivery = %v", err)
	}
	q.Release("s", KindClarify, "c1", true)
	if h, n, _ := q.Head("s", KindClarify); h.ID != "c2" || n != 1 {
		t.Fatalf("after delivery: head %v, %d", h.ID, n)
	}
	// The resolved frame can come before the answer's reply: Release is then a no-op.
	if _, err := q.Claim("s", KindClarify, "c2"); err != nil {
		t.Fatal(err)
	}
	if n, ok := q.Resolve("s", KindClarify, "c2"); !ok || n != 0 {
		t.Fatalf("resolve while answering: %d %v", n, ok)
	}
	q.Release("s", KindClarify, "c2", false)
	if _, n, ok := q.Head("s", KindClarify); ok || n != 0 {
		t.Fatal("a resolved item came back after its answer failed")
	}
}

// TestSettledSessionIsForgotten: a session is held only while something of it waits;
// reading an empty session, resolving, releasing and dropping its last items leave no
// entry behind (issue 24, item 5: per-session maps must not grow with every session
// that ever ran a turn).
func TestSettledSessionIsForgotten(t *testing.T) {
	q := New()
	for i := range 100 {
		s := string(rune('a'+i%26)) + string(rune('0'+i/26))
		q.Head(s, KindApproval)
		q.Head(s, KindClarify)
		_, _ = q.Peek(s, KindApproval, "none")
		_, _ = q.Claim(s, KindClarify, "none")
		q.Release(s, KindApproval, "none", true)
		q.Resolve(s, KindApproval, "none")
		q.DropStream(s, "x")
	}
	if n := q.Sessions(); n != 0 {
		t.Fatalf("reading 100 sessions with nothing waiting left %d entries", n)
	}
	q.Add("s", Item{Kind: KindApproval, ID: "a1", StreamID: "x"})
	q.Add("s", Item{Kind: KindClarify, ID: "c1", StreamID: "x"})
	q.Add("t", Item{Kind: KindApproval, ID: "a2", StreamID: "y"})
	q.Add("u", Item{Kind: KindClarify, ID: "c2", StreamID: "z"})
	if n := q.Sessions(); n != 3 {
		t.Fatalf("3 sessions wait, Sessions() = %d", n)
	}
	// s: one item answered, one resolved by the agent; t: its stream ended; u: the
	// answer is claimed and delivered.
	if _, err := q.Claim("s", KindApproval, "a1"); err != nil {
		t.Fatal(err)
	}
	q.Release("s", KindApproval, "a1", true)
	if n := q.Sessions(); n != 3 {
		t.Fatalf("s still has a clarify waiting, Sessions() = %d", n)
	}
	if _, ok := q.Resolve("s", KindClarify, "c1"); !ok {
		t.Fatal("c1 was waiting")
	}
	if got := q.DropStream("t", "y"); len(got) != 1 {
		t.Fatalf("DropStream(t) = %v", got)
	}
	if _, err := q.Claim("u", KindClarify, "c2"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := q.Head("u", KindClarify); !ok {
		t.Fatal("a claimed item keeps its place until released")
	}
	q.Release("u", KindClarify, "c2", false) // not delivered: still waiting
	if n := q.Sessions(); n != 1 {
		t.Fatalf("only u waits, Sessions() = %d", n)
	}
	if _, err := q.Claim("u", KindClarify, "c2"); err != nil {
		t.Fatalf("an undelivered answer leaves the item answerable: %v", err)
	}
	q.Release("u", KindClarify, "c2", true)
	if n := q.Sessions(); n != 0 {
		t.Fatalf("nothing waits, Sessions() = %d", n)
	}
}
