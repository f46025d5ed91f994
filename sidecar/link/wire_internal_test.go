package link

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is an io.Writer safe for the writer goroutine and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A daemon with no link keeps at most MaxKept bytes: waitKept holds the sidecar's
// output while more is kept and nothing is attached, and lets it go on once an
// acknowledgement drops what was kept, or once a connection is attached.
func TestWaitKeptHoldsOutputUntilAcknowledgedOrAttached(t *testing.T) {
	var p peer
	p.send('D', []byte(strings.Repeat("x", 100)))
	p.send('D', []byte(strings.Repeat("y", 100)))

	released := make(chan struct{})
	go func() { p.waitKept(150, nil); close(released) }()
	select {
	case <-released:
		t.Fatal("waitKept returned with 200 bytes kept over a limit of 150 and no connection")
	default:
	}
	// The acknowledgement of the first item (as a reconnect's hello carries it)
	// leaves 100 bytes: under the limit.
	p.mu.Lock()
	p.dropLocked(1)
	p.mu.Unlock()
	<-released

	p.send('D', []byte(strings.Repeat("z", 100)))
	released = make(chan struct{})
	go func() { p.waitKept(150, nil); close(released) }()
	var w lockedBuffer
	p.attach(&w, "", 0)
	<-released

	// finish writes everything due before it detaches: both kept items reach w.
	p.finish(&w, time.Hour)
	if got := w.String(); !strings.Contains(got, strings.Repeat("y", 100)) || !strings.Contains(got, strings.Repeat("z", 100)) {
		t.Fatalf("finish detached before writing what was due; wrote %q", got)
	}
	p.mu.Lock()
	attached := p.conn != nil
	p.mu.Unlock()
	if attached {
		t.Fatal("finish left the connection attached")
	}
}

// A stop channel ends a wait that would otherwise never end.
func TestWaitKeptEndsWhenStopped(t *testing.T) {
	var p peer
	p.send('D', []byte("0123456789"))
	stop := make(chan struct{})
	released := make(chan struct{})
	go func() { p.waitKept(1, stop); close(released) }()
	close(stop)
	<-released
}
