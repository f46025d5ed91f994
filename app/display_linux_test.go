package app

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// freeDisplay is an X display number no server listens on.
func freeDisplay(t *testing.T) int {
	t.Helper()
	for n := 140; n < 240; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
			continue
		}
		if c, err := net.Dial("unix", fmt.Sprintf("@/tmp/.X11-unix/X%d", n)); err == nil {
			c.Close()
			continue
		}
		return n
	}
	t.Fatal("no free X display number")
	return 0
}

// OpenDisplay waits for a display that is not there yet (its server starts 700 ms after
// the app asked), and names the display when none comes. GTK runs in a child process: a
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
	n := freeDisplay(t)
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

	// The server starts while the app waits: the window can open.
	server := exec.Command(xvfb, fmt.Sprintf(":%d", n), "-screen", "0", "800x600x24", "-nolisten", "tcp")
	started := make(chan error, 1)
	go func() {
		time.Sleep(700 * time.Millisecond)
		started <- server.Start()
	}()
	defer func() {
		if err := <-started; err == nil {
			_ = server.Process.Kill()
			_, _ = server.Process.Wait()
		}
	}()
	out, err = child("15s")
	if err != nil || !strings.Contains(out, "err=<nil>") {
		t.Fatalf("a display that came 700 ms late was not waited for: %v\n%s", err, out)
	}
}
