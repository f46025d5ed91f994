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
		if _, err := q.Take(c.sess, c.kind, c.id); !errors.Is(err, ErrStale) {
			t.Fatalf("Take(%v) = %v, want stale", c, err)
		}
	}
	if _, err := q.Take("s", KindApproval, "a1"); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Take("s", KindApproval, "a1"); !errors.Is(err, ErrStale) {
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
			if _, err := q.Take("s", KindApproval, "a"); err == nil {
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
