// Package testwait is the one way a test waits: on the real condition, polled, with one
// generous deadline shared by every test of the repository. A test never decides by the
// wall clock (a sleep that "should" be long enough, a bound that a loaded machine can
// outlast); it waits for what it needs to see, and the deadline only turns a hang into
// a failure with a message.
//
// The deadline is Timeout: 2 minutes by default, TALARIA_TEST_WAIT (a Go duration) to
// change it. It is far longer than anything a healthy run waits, on purpose: a shared
// machine under load can stall a process for tens of seconds.
//
// Imported by tests only (of backend/, sidecar/ and app/); it holds no product code.
package testwait

import (
	"context"
	"os"
	"testing"
	"time"
)

// Timeout is the deadline of every wait: TALARIA_TEST_WAIT if it parses as a positive
// duration, else 2 minutes.
var Timeout = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("TALARIA_TEST_WAIT")); err == nil && d > 0 {
		return d
	}
	return 2 * time.Minute
}()

// Poll is the interval between two checks of a condition.
const Poll = 10 * time.Millisecond

// For polls cond every Poll until it returns true, failing the test (t.Fatalf, naming
// what) if it has not within Timeout. cond runs on the test's goroutine.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Until(cond) {
		t.Fatalf("waited %v for %s", Timeout, what)
	}
}

// Until polls cond every Poll until it returns true (true) or Timeout has passed
// (false), for a caller that reports the failure itself.
func Until(cond func() bool) bool {
	deadline := time.Now().Add(Timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Poll)
	}
}

// Recv returns the next value of ch, failing the test (naming what) if none comes within
// Timeout or ch is closed.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the channel was closed", what)
		}
		return v
	case <-timer.C:
		t.Fatalf("waited %v for %s", Timeout, what)
	}
	var zero T
	return zero
}

// Done waits for ch to be closed or to deliver a value, failing the test (naming what)
// if neither happens within Timeout.
func Done[T any](t testing.TB, ch <-chan T, what string) {
	t.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("waited %v for %s", Timeout, what)
	}
}

// Context is a context that ends at Timeout (or when the test ends), for a call that
// blocks on the code under test.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}
