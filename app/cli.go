package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// CommandLine is what `talaria [OPTION]...` asked for. A second launch's arguments are
// parsed the same way by the running app (see AttachInstance).
type CommandLine struct {
	DataDir  string // --data-dir; "" for $TALARIA_HOME or the per-user data folder
	Hidden   bool   // --hidden: start in the tray without showing the window (autostart)
	NewChat  bool   // --new-chat: open a new chat (the desktop entry's "New chat" action)
	QuickAsk bool   // --quick-ask: open quick ask (for a shortcut bound in the desktop's settings)
	Version  bool   // --version
}

// BuildInfo says which build this is; the build sets it (see the Makefile's LDFLAGS).
type BuildInfo struct {
	Version string // e.g. "0.1.0" or "0.1.0-dev+a43786d"
	Commit  string // the git commit, "" when unknown
	Date    string // UTC build time, RFC 3339, "" when unknown
}

// String is the --version text: "talaria VERSION" on the first line (help2man reads
// it), then the commit and the build date when known.
func (b BuildInfo) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "talaria %s\n", b.Version)
	if b.Commit != "" {
		fmt.Fprintf(&sb, "commit %s\n", b.Commit)
	}
	if b.Date != "" {
		fmt.Fprintf(&sb, "built %s\n", b.Date)
	}
	return sb.String()
}

const usageHead = `Usage: talaria [OPTION]...
Talaria Desktop: a local desktop app for chatting with an AI agent that works on your
own machine (the built-in runtime for any OpenAI-compatible endpoint, Hermes Agent, or
an agent speaking the Agent Client Protocol). Without options it opens the window; a
second launch on the same data folder brings the running window to the front.

Options:
`

const usageTail = `
Environment:
  TALARIA_HOME      the data folder when --data-dir is not given
  TALARIA_SSH_CONFIG  the ssh_config file remote hosts' ssh reads instead of
                    ~/.ssh/config
  XDG_DATA_HOME     on Linux, the data folder is $XDG_DATA_HOME/talaria (default
                    ~/.local/share/talaria)
  XDG_STATE_HOME    on Linux, the logs of that data folder are in
                    $XDG_STATE_HOME/talaria/logs (default ~/.local/state/talaria)
  XDG_CACHE_HOME    on Linux, its cache is $XDG_CACHE_HOME/talaria (default
                    ~/.cache/talaria)

Files:
  DATA/talaria.db   sessions, messages, the run journal and settings (SQLite)
  LOGS/             talaria.log (the app), sidecar.log (the agent process) and
                    crashes/ (the app's crash reports): DATA/logs/ for a data folder
                    given by --data-dir or TALARIA_HOME, else the state folder above
  ~/.config/autostart/talaria.desktop
                    written by Settings, "Start Talaria at login"

API keys and remembered secrets are kept in the system keyring (Secret Service),
never in the data folder.
`

// optionArg names the value of an option in the usage text (an option added by extra
// names it in its usage between back quotes, as flag.UnquoteUsage reads it).
var optionArg = map[string]string{"data-dir": "DIR"}

// ParseCommandLine parses args (without the program name). extra, when given, adds
// options of a build that has more than the user's (talaria-drivers' --selftest: see
// main's drivers.go); the release binary has none. With --help it writes the usage
// (every option of fs) to stdout and returns done with code 0; with --version it writes
// the version; a bad option writes the error and a hint to stderr and returns done with
// code 2.
func ParseCommandLine(args []string, build BuildInfo, stdout, stderr io.Writer, extra ...func(*flag.FlagSet)) (cl CommandLine, code int, done bool) {
	fs := newFlagSet(&cl)
	for _, add := range extra {
		add(fs)
	}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		writeUsage(stdout, fs)
		return cl, 0, true
	case err != nil:
		fmt.Fprintf(stderr, "talaria: %v\nTry 'talaria --help' for the options.\n", err)
		return cl, 2, true
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "talaria: unexpected argument %q\nTry 'talaria --help' for the options.\n", fs.Arg(0))
		return cl, 2, true
	case cl.Version:
		fmt.Fprint(stdout, build.String())
		return cl, 0, true
	}
	return cl, 0, false
}

func newFlagSet(cl *CommandLine) *flag.FlagSet {
	fs := flag.NewFlagSet("talaria", flag.ContinueOnError)
	fs.StringVar(&cl.DataDir, "data-dir", "", "folder for the database, logs and cache (default: $TALARIA_HOME or the per-user data folder)")
	fs.BoolVar(&cl.Hidden, "hidden", false, "start in the system tray without showing the window (how Talaria starts at login); where no tray is shown the window opens anyway")
	fs.BoolVar(&cl.NewChat, "new-chat", false, "open a new chat; passed to the running Talaria when there is one")
	fs.BoolVar(&cl.QuickAsk, "quick-ask", false, "open quick ask, a small window above the others for one question; passed to the running Talaria when there is one (bind it to a keyboard shortcut)")
	fs.BoolVar(&cl.Version, "version", false, "print the version, commit and build date, and exit")
	return fs
}

// writeUsage writes GNU-style help (help2man turns it into the man page).
func writeUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, usageHead)
	fs.VisitAll(func(f *flag.Flag) {
		name, desc := "--"+f.Name, f.Usage
		if a, ok := optionArg[f.Name]; ok {
			name += "=" + a
		} else if strings.Contains(f.Usage, "`") {
			a, d := flag.UnquoteUsage(f)
			name, desc = name+"="+a, d
		}
		if f.DefValue != "" && f.DefValue != "false" {
			desc += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		lines := wrap(desc, 56)
		if len(name) > 18 {
			fmt.Fprintf(w, "      %s\n", name)
		} else {
			fmt.Fprintf(w, "      %-18s  %s\n", name, lines[0])
			lines = lines[1:]
		}
		for _, l := range lines {
			fmt.Fprintf(w, "      %-18s  %s\n", "", l)
		}
	})
	fmt.Fprintf(w, "      %-18s  %s\n", "--help", "show this help and exit")
	fmt.Fprint(w, usageTail)
}

// wrap splits s into lines of at most width characters at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}
