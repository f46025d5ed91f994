package app

import (
	"bytes"
	"flag"
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
		{args: nil, want: CommandLine{}},
		{args: []string{"--hidden", "--data-dir", "/d"}, want: CommandLine{Hidden: true, DataDir: "/d"}},
		{args: []string{"-new-chat"}, want: CommandLine{NewChat: true}},
		{args: []string{"--version"}, done: true, out: "talaria 1.2.3\ncommit abc1234\nbuilt 2026-12-01T10:00:00Z\n"},
		{args: []string{"--help"}, done: true, out: "Usage: talaria [OPTION]..."},
		{args: []string{"-h"}, done: true, out: "--new-chat"},
		{args: []string{"--bogus"}, done: true, code: 2, err: "flag provided but not defined: -bogus\nTry 'talaria --help'"},
		{args: []string{"file.txt"}, done: true, code: 2, err: `unexpected argument "file.txt"`},
		// The test drivers' options are talaria-drivers' only (app/drivers).
		{args: []string{"--selftest"}, done: true, code: 2, err: "flag provided but not defined: -selftest"},
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
// own starting with "--", descriptions wrapped within 80 columns; only the user's
// options (the drivers' are talaria-drivers' only).
func TestUsageIsGNUStyle(t *testing.T) {
	var out bytes.Buffer
	ParseCommandLine([]string{"--help"}, BuildInfo{}, &out, io.Discard)
	checkUsage(t, out.String(), []string{"--data-dir=DIR", "--hidden", "--new-chat", "--quick-ask", "--version", "--help"})
	if opts := usageOptions(out.String()); len(opts) != 6 {
		t.Errorf("the help lists %d options, want the user's 6: %q", len(opts), opts)
	}
}

// An option added by extra names its value by the back-quoted word of its usage.
func TestUsageOfExtraOptions(t *testing.T) {
	var out bytes.Buffer
	var file string
	ParseCommandLine([]string{"--help"}, BuildInfo{}, &out, io.Discard, func(fs *flag.FlagSet) {
		fs.StringVar(&file, "shot", "", "save it as `FILE`")
	})
	checkUsage(t, out.String(), []string{"--shot=FILE", "--data-dir=DIR", "--help"})
	if !strings.Contains(out.String(), "save it as FILE") {
		t.Errorf("the usage keeps the back quotes:\n%s", out.String())
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
	if got := a.services().About.TakeLaunchActions(); !slices.Equal(got, []string{LaunchNewChat, LaunchNewChat}) {
		t.Fatalf("actions = %q", got)
	}
	if got := a.services().About.TakeLaunchActions(); got == nil || len(got) != 0 {
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

// usageOptions returns the options the usage text help lists, as "--name" or
// "--name=ARG", in order.
func usageOptions(help string) []string {
	var out []string
	for _, l := range strings.Split(help, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(l, "      --") {
			out = append(out, f[0])
		}
	}
	return out
}

// checkUsage fails t unless help (ParseCommandLine's --help) has a line for each of
// opts and no line over 86 columns (help2man's man page reads it).
func checkUsage(t testing.TB, help string, opts []string) {
	t.Helper()
	for _, opt := range opts {
		if !slices.Contains(usageOptions(help), opt) {
			t.Errorf("no line for %s in:\n%s", opt, help)
		}
	}
	for _, l := range strings.Split(help, "\n") {
		if len(l) > 86 {
			t.Errorf("line longer than 86 columns: %q", l)
		}
	}
}
