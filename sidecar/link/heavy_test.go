//go:build linux

package link_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/link"
)

// Heavy traffic both ways at once, with a drop in the middle: the host writes while
// it reads (as the supervisor does), about 4 MB each way, more than the pipes, the
// socket and ssh buffer together. Neither side may stop reading because the other is
// not reading yet (each once replayed its whole backlog before reading, and wrote under
// the lock its reader needed to acknowledge: the link stalled for good). Found by the
// adversarial helper.
func TestLinkBothWaysAtOnceWithADrop(t *testing.T) {
	r := startLink(t, uniqueID("0a01"))
	const n = 4000
	pad := strings.Repeat("x", 1000)
	go func() {
		for i := 0; i < n; i++ {
			fmt.Fprintf(r.in, "line %d %s\n", i, pad)
		}
	}()
	got := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			line, err := r.out.ReadString('\n')
			if err != nil || line != fmt.Sprintf("echo line %d %s\n", i, pad) {
				got <- fmt.Errorf("line %d: %q %v", i, line, err)
				return
			}
			if i == n/4 {
				kill(t, attaches())
			}
		}
		got <- nil
	}()
	if err := testwait.Recv(t, got, "every line echoed once, in order"); err != nil {
		t.Fatal(err)
	}
	r.in.Close()
	if c := testwait.Recv(t, r.code, "the link's end"); c != 7 {
		t.Fatalf("exit code %d, want 7", c)
	}
}

// The daemon stops answering (SIGSTOP: it accepts the connection and says nothing)
// and the connection drops: Link still gives up after GiveUp, with ExitLost, instead
// of waiting for the hello forever. Found by the adversarial helper.
func TestLinkGivesUpOnAStoppedDaemon(t *testing.T) {
	id := uniqueID("0a02")
	r := startLinkWith(t, id, time.Second)
	r.send(t, 0, 1)
	r.expect(t, 0, 1)
	ds := daemons(id)
	if len(ds) == 0 {
		t.Fatal("no daemon")
	}
	for _, p := range ds {
		_ = syscall.Kill(p, syscall.SIGSTOP)
	}
	defer kill(t, ds)
	kill(t, attaches())
	if c := testwait.Recv(t, r.code, "the link to give up"); c != link.ExitLost {
		t.Fatalf("exit code %d, want ExitLost", c)
	}
	kill(t, attaches())
}
