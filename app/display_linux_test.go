package app

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
)

// freeDisplay reserves an X display number no server uses and returns it with the
// function that gives the reservation up (call it right before starting a server on
// it). The reservation is the X lock file /tmp/.X<n>-lock, created exclusively: X
// servers, xvfb-run -a and this test in another run of the suite on the same machine
// all skip a number whose lock file exists, so no one starts a server on it while this
// test needs it to have none. The search starts at a number of this process's own, so
// concurrent runs rarely even try the same one.
func freeDisplay(t *testing.T) (int, func()) {
	t.Helper()
	start := 140 + os.Getpid()%80
	for i := 0; i < 100; i++ {
		n := 140 + (start-140+i)%100
		lock := fmt.Sprintf("/tmp/.X%d-lock", n)
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
			continue
		}
		if c, err := net.Dial("unix", fmt.Sprintf("@/tmp/.X11-unix/X%d", n)); err == nil {
			c.Close()
			continue
		}
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
		if err != nil {
			continue // taken (or being taken) by someone else
		}
		fmt.Fprintf(f, "%10d\n", os.Getpid()) // the X lock file's format
		f.Close()
		var once sync.Once
		release := func() { once.Do(func() { os.Remove(lock) }) }
		t.Cleanup(release)
		return n, release
	}
	t.Fatal("no free X display number")
	return 0, nil
}

// OpenDisplay waits for a display that is not there yet (its server starts once the
// app's first try failed), and names the display when none comes. GTK runs in a child process: a
// display that goes away takes GTK's process with it.
func TestOpenDisplayWaitsForTheDisplay(t *testing.T) {
	if os.Getenv("OPENDISPLAY_CHILD") != "" {
		runtime.LockOSThread()
		timeout, _ := time.ParseDuration(os.Getenv("OPENDISPLAY_TIMEOUT"))
		start := time.Now()
		err := OpenDisplay(timeout)
		fmt.Printf("took=%v err=%v\n", time.Since(start).Round(time.Millisecond), err)
		if err != nil {
			os.Exit(3)
		}
		return
	}
	xvfb, err := exec.LookPath("Xvfb")
	if err != nil {
		t.Fatal("Xvfb is not installed (Debian: xvfb; scripts/setup.sh installs it)")
	}
	n, release := freeDisplay(t)
	child := func(timeout string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestOpenDisplayWaitsForTheDisplay$", "-test.count=1")
		cmd.Env = append(os.Environ(), "OPENDISPLAY_CHILD=1", "OPENDISPLAY_TIMEOUT="+timeout, fmt.Sprintf("DISPLAY=:%d", n), "GDK_BACKEND=x11", "WAYLAND_DISPLAY=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// No server at all: it gives up after the timeout and says which display.
	out, err := child("400ms")
	if err == nil || !strings.Contains(out, fmt.Sprintf(`cannot open the display ":%d"`, n)) || !strings.Contains(out, "desktop session") {
		t.Fatalf("with no display: %v\n%s", err, out)
	}

	// The server starts while the app waits: the window can open. The test answers the
	// app's first try itself (a listener on the display's socket that hangs up at once),
	// and starts the server only then: the app has failed once and must wait for it.
	bell, err := net.Listen("unix", fmt.Sprintf("@/tmp/.X11-unix/X%d", n))
	if err != nil {
		t.Fatal(err)
	}
	defer bell.Close()
	rang := make(chan struct{})
	go func() {
		if c, err := bell.Accept(); err == nil {
			c.Close()
			close(rang)
		}
	}()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := child(testwait.Timeout.String())
		done <- result{out, err}
	}()
	testwait.Done(t, rang, "the app's first try to open the display")
	bell.Close()
	release() // the server takes the display number's lock itself
	server := exec.Command(xvfb, fmt.Sprintf(":%d", n), "-screen", "0", "800x600x24", "-nolisten", "tcp")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = server.Process.Kill()
		_, _ = server.Process.Wait()
	}()
	res := testwait.Recv(t, done, "the app to open the display")
	if res.err != nil || !strings.Contains(res.out, "err=<nil>") {
		t.Fatalf("a display that came after the app's first try was not waited for: %v\n%s", res.err, res.out)
	}
}
