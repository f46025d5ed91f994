package app

import (
	"bytes"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"talaria/backend"
)

func TestParseCommandLine(t *testing.T) {
	build := BuildInfo{Version: "1.2.3", Commit: "abc1234", Date: "2026-12-01T10:00:00Z"}
	cases := []struct {
		args     []string
		code     int
		done     bool
		want     CommandLine
		out, err string // substrings of stdout and stderr
	}{
		{args: nil, want: CommandLine{Scenario: "chat"}},
		{args: []string{"--hidden", "--data-dir", "/d"}, want: CommandLine{Hidden: true, DataDir: "/d", Scenario: "chat"}},
		{args: []string{"-new-chat"}, want: CommandLine{NewChat: true, Scenario: "chat"}},
		{args: []string{"--version"}, done: true, out: "talaria 1.2.3\ncommit abc1234\nbuilt 2026-12-01T10:00:00Z\n"},
		{args: []string{"--help"}, done: true, out: "Usage: talaria [OPTION]..."},
		{args: []string{"-h"}, done: true, out: "--new-chat"},
		{args: []string{"--bogus"}, done: true, code: 2, err: "flag provided but not defined: -bogus\nTry 'talaria --help'"},
		{args: []string{"file.txt"}, done: true, code: 2, err: `unexpected argument "file.txt"`},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		cl, code, done := ParseCommandLine(c.args, build, &out, &errb)
		if code != c.code || done != c.done {
			t.Errorf("%q: code %d done %v, want %d %v (stderr %q)", c.args, code, done, c.code, c.done, errb.String())
		}
		if !done && cl != c.want {
			t.Errorf("%q: %+v, want %+v", c.args, cl, c.want)
		}
		if !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
			t.Errorf("%q: stdout %q stderr %q, want %q / %q", c.args, out.String(), errb.String(), c.out, c.err)
		}
		if c.code == 0 && errb.Len() > 0 {
			t.Errorf("%q: wrote to stderr: %q", c.args, errb.String())
		}
	}
}

// The help is what help2man turns into the man page: every option on a line of its
// own starting with "--", descriptions wrapped within 80 columns.
func TestUsageIsGNUStyle(t *testing.T) {
	var out bytes.Buffer
	ParseCommandLine([]string{"--help"}, BuildInfo{}, &out, io.Discard)
	for _, opt := range []string{"--data-dir=DIR", "--hidden", "--new-chat", "--selftest", "--screenshot=FILE", "--scenario=NAME", "--version", "--help"} {
		found := false
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), opt+" ") || strings.TrimSpace(l) == opt {
				found = true
			}
		}
		if !found {
			t.Errorf("no line for %s in:\n%s", opt, out.String())
		}
	}
	for _, sc := range Scenarios {
		if !strings.Contains(out.String(), sc) {
			t.Errorf("the help does not name the scenario %s", sc)
		}
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if len(l) > 86 {
			t.Errorf("line longer than 86 columns: %q", l)
		}
	}
}

func testApp() *App {
	return &App{svc: &backend.Service{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
}

func TestLaunchActionsAreTakenOnce(t *testing.T) {
	a := testApp()
	ApplyCommandLine(a, CommandLine{NewChat: true}, false)
	a.activate([]string{"--new-chat"})
	a.activate([]string{"--hidden"})  // a second autostart: nothing to do
	a.activate([]string{"--bogus=1"}) // shows the window, queues nothing
	if got := a.TakeLaunchActions(); !slices.Equal(got, []string{LaunchNewChat, LaunchNewChat}) {
		t.Fatalf("actions = %q", got)
	}
	if got := a.TakeLaunchActions(); got == nil || len(got) != 0 {
		t.Fatalf("second take = %#v, want an empty list", got)
	}
}

// A --hidden start stays hidden while a tray host shows the icon, and without one shows
// the window once hiddenStartWait has passed, not before. In a synctest bubble: the
// product's own wait, on the bubble's clock.
func TestHiddenStartShowsTheWindowWithoutTrayHost(t *testing.T) {
	old := hostAvailable
	defer func() { hostAvailable = old }()
	synctest.Test(t, func(t *testing.T) {
		a := testApp()
		ApplyCommandLine(a, CommandLine{Hidden: true}, true)
		if !a.away() {
			t.Fatal("a hidden start is not away")
		}
		hostAvailable = func() bool { return true }
		a.watchHiddenStart()
		if !a.away() {
			t.Fatal("with a tray host the window was shown")
		}

		hostAvailable = func() bool { return false }
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			a.watchHiddenStart()
		}()
		time.Sleep(hiddenStartWait - time.Second)
		synctest.Wait()
		if !a.away() {
			t.Fatalf("without a tray host the window was shown after %v, before hiddenStartWait (%v)", time.Since(start), hiddenStartWait)
		}
		<-done
		if a.away() {
			t.Fatal("without a tray host the window stayed hidden")
		}
		if d := time.Since(start); d < hiddenStartWait || d > hiddenStartWait+time.Second {
			t.Fatalf("the window was shown after %v, want hiddenStartWait (%v)", d, hiddenStartWait)
		}
	})
}
