//go:build linux

package link_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"talaria/internal/testproc"
	"talaria/internal/testwait"
	"talaria/sidecar/link"
)

// The test binary plays `talaria sidecar attach|daemon` for the Link under test; its
// daemon's sidecar echoes each line with a prefix and exits 7 at the end of its stdin.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "sidecar" {
		args := os.Args[3:]
		switch os.Args[2] {
		case "attach":
			os.Exit(link.Attach(os.Stdin, os.Stdout, args[1:]))
		case "daemon":
			os.Exit(link.Daemon(args[1], time.Minute, echo))
		}
	}
	os.Exit(m.Run())
}

func echo(in io.Reader, out, stderr io.Writer) int {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		fmt.Fprintf(out, "echo %s\n", sc.Text())
		fmt.Fprintf(stderr, "saw %s\n", sc.Text())
	}
	return 7
}

type linkRun struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	code chan int
}

func startLink(t *testing.T, id string) *linkRun {
	t.Helper()
	return startLinkWith(t, id, time.Hour)
}

// startLinkWith runs Link through the test binary's attach, giving up after giveUp.
func startLinkWith(t *testing.T, id string, giveUp time.Duration) *linkRun {
	t.Helper()
	shortTemp(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &linkRun{in: inW, out: bufio.NewReader(outR), code: make(chan int, 1)}
	go func() {
		code := link.Link(link.Options{Command: []string{self, "sidecar", "attach", "--"}, ID: id,
			GiveUp: giveUp, Backoff: []time.Duration{10 * time.Millisecond}}, inR, outW, io.Discard)
		outW.Close()
		r.code <- code
	}()
	return r
}

func (r *linkRun) send(t *testing.T, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := fmt.Fprintf(r.in, "line %d\n", i); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *linkRun) expect(t *testing.T, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		line, err := r.out.ReadString('\n')
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if want := fmt.Sprintf("echo line %d\n", i); line != want {
			t.Fatalf("got %q, want %q", line, want)
		}
	}
}

// uniqueID is a daemon id for this run of the test binary (a daemon left by another
// run, or by another package's tests, never answers for it).
func uniqueID(tag string) string {
	return fmt.Sprintf("%016x%s", uint64(os.Getpid())<<20|uint64(time.Now().UnixNano()&0xfffff), tag)
}

// shortTemp points XDG_RUNTIME_DIR at a new folder whose socket paths fit (a test's
// TempDir is too long, and SocketDir would fall back to the shared ~/.cache).
func shortTemp(t *testing.T) {
	t.Helper()
	d, err := os.MkdirTemp("", "tl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	t.Setenv("XDG_RUNTIME_DIR", d)
}

// kill SIGKILLs pids.
func kill(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func attaches() []int {
	var out []int
	for _, pid := range testproc.ChildrenOf(os.Getpid()) {
		if (testproc.Process{PID: pid}).HasArgs("attach") {
			out = append(out, pid)
		}
	}
	return out
}

func daemons(id string) []int {
	return testproc.Find(func(p testproc.Process) bool { return p.HasArgs("daemon", "--id", id) })
}

// Lines sent both ways while the connection is down arrive once each, in order, after
// it comes back; the sidecar's exit code comes through at the end.
func TestLinkSurvivesDroppedConnections(t *testing.T) {
	id := uniqueID("0001")
	r := startLink(t, id)
	r.send(t, 0, 50)
	r.expect(t, 0, 50)
	for round := 1; round <= 3; round++ {
		pids := attaches()
		if len(pids) == 0 {
			t.Fatal("no connection to drop")
		}
		kill(t, pids)
		r.send(t, round*50, round*50+50)
		r.expect(t, round*50, round*50+50)
	}
	r.in.Close()
	if code := <-r.code; code != 7 {
		t.Fatalf("exit code %d, want the sidecar's 7", code)
	}
	if _, err := r.out.ReadString('\n'); err != io.EOF {
		t.Fatalf("more output after the end: %v", err)
	}
	testwait.For(t, "the daemon to exit once its exit code was taken", func() bool { return len(daemons(id)) == 0 })
}

// A daemon that is gone (the host restarted) ends Link with ExitGone, not a wait.
func TestLinkEndsWhenTheDaemonIsGone(t *testing.T) {
	id := uniqueID("0002")
	r := startLink(t, id)
	r.send(t, 0, 1)
	r.expect(t, 0, 1)
	kill(t, daemons(id))
	kill(t, attaches())
	if code := <-r.code; code != link.ExitGone {
		t.Fatalf("exit code %d, want ExitGone", code)
	}
}

// A first connection that fails ends Link with the command's own exit code (ssh's 255
// and its message are how the host learns why).
func TestLinkFirstConnectionFailure(t *testing.T) {
	var errb strings.Builder
	code := link.Link(link.Options{Command: []string{"sh", "-c", "echo 'Host key verification failed.' >&2; exit 255"}},
		strings.NewReader(""), io.Discard, &errb)
	if code != 255 || !strings.Contains(errb.String(), "Host key verification failed.") {
		t.Fatalf("exit code %d, want 255; stderr %q", code, errb.String())
	}
}

// A reconnect whose command fails there (the copy of the sidecar deleted: the shell's
// 127) ends Link with ExitGone instead of trying again for the give-up time.
func TestLinkEndsWhenTheCommandThereFailsAfterADrop(t *testing.T) {
	shortTemp(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id := uniqueID("0003")
	mark := t.TempDir() + "/connected"
	script := `if [ -e "$1" ]; then echo "talaria: not found" >&2; exit 127; fi; : > "$1"; exec "$2" sidecar attach --`
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- link.Link(link.Options{Command: []string{"sh", "-c", script, "sh", mark, self}, ID: id,
			GiveUp: time.Hour, Backoff: []time.Duration{10 * time.Millisecond}}, inR, outW, io.Discard)
		outW.Close()
	}()
	r := &linkRun{in: inW, out: bufio.NewReader(outR), code: code}
	r.send(t, 0, 1)
	r.expect(t, 0, 1)
	kill(t, attaches())
	if c := <-code; c != link.ExitGone {
		t.Fatalf("exit code %d, want ExitGone", c)
	}
	kill(t, daemons(id))
}
