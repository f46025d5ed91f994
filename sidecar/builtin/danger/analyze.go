package danger

import (
	"path"
	"regexp"
	"strings"
)

// command is one simple command as a pattern sees it: after leading assignments and
// wrappers (sudo, env, nohup, xargs, timeout ...) are taken off.
type command struct {
	name      string     // base name of the program, e.g. "rm" for /bin/rm
	nameWord  word       // the command word as lexed
	args      []string   // its arguments, dequoted, redirections taken out
	words     []word     // the same arguments with their substitutions
	redirects []redirect // its redirections
	// privileged: a wrapper ran it as another user (sudo, doas, su, pkexec, run0).
	privileged bool
	// stdinFrom is the command before it in its pipeline (nil when none).
	stdinFrom *command
}

type redirect struct {
	op     string // ">", ">>", "2>", "&>", "<" ...
	target string
}

// writes reports whether a redirection writes its target.
func (r redirect) writes() bool { return strings.Contains(r.op, ">") }

// maxDepth bounds nested analysis (bash -c inside $( ) inside eval ...).
const maxDepth = 8

// analysis collects the commands of a command line, nested ones included.
type analysis struct {
	cmds []*command
	raw  []string // every source analysed (the line and each nested script), for the textual patterns
}

func analyse(src string) *analysis {
	a := &analysis{}
	a.source(src, 0)
	return a
}

func (a *analysis) source(src string, depth int) {
	if depth > maxDepth || strings.TrimSpace(src) == "" {
		return
	}
	a.raw = append(a.raw, src)
	for _, p := range lex(src) {
		var prev *command
		for _, s := range p {
			for _, w := range s {
				for _, sub := range w.subs {
					a.source(sub, depth+1)
				}
			}
			c := a.simple(s, false, depth)
			if c != nil {
				c.stdinFrom = prev
				// Text piped into a shell is a script: echo "rm -rf /" | sh.
				if prev != nil && readsScriptFromStdin(c) && (prev.name == "echo" || prev.name == "printf") {
					a.source(strings.Join(prev.args, " "), depth+1)
				}
			}
			prev = c
		}
	}
}

// simple turns a lexed command into a command, unwrapping wrappers and analysing the
// scripts it hands to a shell (bash -c, eval, su -c, find -exec).
func (a *analysis) simple(s simple, privileged bool, depth int) *command {
	c := &command{privileged: privileged}
	var ws []word
	for i := 0; i < len(s); i++ {
		if s[i].redirect {
			r := redirect{op: s[i].text}
			if i+1 < len(s) {
				r.target = s[i+1].text
				i++
			}
			c.redirects = append(c.redirects, r)
			continue
		}
		ws = append(ws, s[i])
	}
	// Leading assignments: FOO=bar cmd.
	for len(ws) > 0 && isAssignment(ws[0].text) {
		ws = ws[1:]
	}
	for len(ws) > 0 {
		name := base(ws[0].text)
		rest, ok := unwrap(name, ws[1:])
		if !ok {
			break
		}
		if privilegeWrappers[name] {
			c.privileged = true
			if name == "su" {
				// su [options] [user] [-c script]: the script runs as the user.
				for i, w := range ws[1:] {
					if (w.text == "-c" || w.text == "--command") && i+2 < len(ws) {
						sub := a.simpleScript(ws[i+2].text, depth)
						for _, x := range sub {
							x.privileged = true
						}
					}
				}
				c.name = name
				c.words = ws[1:]
				c.args = texts(c.words)
				a.cmds = append(a.cmds, c)
				return c
			}
		}
		ws = rest
	}
	if len(ws) == 0 {
		if len(c.redirects) == 0 && !c.privileged {
			return nil
		}
		a.cmds = append(a.cmds, c)
		return c
	}
	c.name = base(ws[0].text)
	c.nameWord = ws[0]
	c.words = ws[1:]
	c.args = texts(c.words)
	a.cmds = append(a.cmds, c)

	switch {
	case isShell(c.name):
		if script, ok := shellScript(c.args); ok {
			for _, x := range a.simpleScript(script, depth) {
				x.privileged = x.privileged || c.privileged
			}
		}
	case c.name == "eval":
		args := c.args
		for len(args) > 0 && args[0] == "eval" { // eval eval ... is one eval
			args = args[1:]
		}
		for _, x := range a.simpleScript(strings.Join(args, " "), depth) {
			x.privileged = x.privileged || c.privileged
		}
	case c.name == "find":
		// find ... -exec cmd args {} ; (also -execdir, -ok, -okdir)
		for i := 0; i < len(c.words); i++ {
			switch c.words[i].text {
			case "-exec", "-execdir", "-ok", "-okdir":
				j := i + 1
				for j < len(c.words) && c.words[j].text != ";" && c.words[j].text != "+" {
					j++
				}
				if j > i+1 {
					a.simple(simple(c.words[i+1:j]), c.privileged, depth+1)
				}
				i = j
			}
		}
	}
	return c
}

// simpleScript analyses a nested script and returns the commands it added.
func (a *analysis) simpleScript(script string, depth int) []*command {
	n := len(a.cmds)
	a.source(script, depth+1)
	return a.cmds[n:]
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

var assignmentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=`)

func isAssignment(s string) bool { return assignmentRE.MatchString(s) }

// base is the program name of a command word: /usr/bin/rm and \rm are rm.
func base(s string) string {
	s = strings.TrimLeft(s, "\\")
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return s
}

var privilegeWrappers = map[string]bool{"sudo": true, "doas": true, "su": true, "pkexec": true, "run0": true}

// wrapperOptsWithArg are the wrappers' options that take a separate argument.
var wrapperOptsWithArg = map[string]map[string]bool{
	"sudo":    set("-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R", "--user", "--group", "--host", "--prompt", "--chdir", "--role", "--type", "--other-user", "--close-from", "--command-timeout", "--chroot"),
	"doas":    set("-u", "-C"),
	"pkexec":  set("--user"),
	"run0":    set("-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv", "--unit", "--property", "--description", "--slice", "--nice", "--background"),
	"env":     set("-u", "--unset", "-C", "--chdir", "-S", "--split-string"),
	"nice":    set("-n", "--adjustment"),
	"ionice":  set("-c", "-n", "-p", "-P", "-u", "--class", "--classdata"),
	"timeout": set("-s", "--signal", "-k", "--kill-after"),
	"xargs":   set("-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--replace", "--max-chars", "--process-slot-var"),
	"stdbuf":  set("-i", "-o", "-e"),
	"chrt":    set(),
	"taskset": set(),
	"flock":   set("-w", "-E", "--timeout", "--conflict-exit-code"),
	"watch":   set("-n", "-d", "--interval"),
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// unwrap takes a wrapper's own options (and its positional argument, for timeout and
// friends) off: it returns the words of the command it runs and true, or false when
// name is not a wrapper.
func unwrap(name string, rest []word) ([]word, bool) {
	switch name {
	case "sudo", "doas", "pkexec", "run0", "env", "nice", "ionice", "timeout", "xargs", "stdbuf", "nohup",
		"time", "exec", "command", "builtin", "unbuffer", "chronic", "caffeinate", "chrt", "taskset", "flock", "watch", "busybox", "setsid", "script":
	case "su":
		return rest, true
	default:
		return nil, false
	}
	if name == "command" {
		// command -v / -V name only looks a name up.
		for _, w := range rest {
			if w.text == "-v" || w.text == "-V" {
				return nil, true
			}
		}
	}
	withArg := wrapperOptsWithArg[name]
	i := 0
	for i < len(rest) {
		t := rest[i].text
		if t == "--" {
			i++
			break
		}
		if name == "env" && isAssignment(t) {
			i++
			continue
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			break
		}
		if withArg[t] {
			i += 2
			continue
		}
		if name == "script" && (t == "-c" || t == "--command") && i+1 < len(rest) {
			// script -c 'cmd' runs cmd through a shell.
			return []word{{text: "sh"}, {text: "-c"}, rest[i+1]}, true
		}
		i++
	}
	rest = rest[min(i, len(rest)):]
	switch name {
	case "timeout":
		if len(rest) > 0 { // the duration
			rest = rest[1:]
		}
	case "chrt":
		if len(rest) > 0 { // the priority
			rest = rest[1:]
		}
	case "taskset":
		if len(rest) > 0 { // the mask
			rest = rest[1:]
		}
	case "flock":
		if len(rest) > 0 { // the lock file
			rest = rest[1:]
		}
		if len(rest) > 1 && (rest[0].text == "-c" || rest[0].text == "--command") {
			return []word{{text: "sh"}, {text: "-c"}, rest[1]}, true
		}
	case "watch":
		// watch runs its arguments joined through sh -c.
		if len(rest) > 0 {
			return []word{{text: "sh"}, {text: "-c"}, {text: strings.Join(texts(rest), " ")}}, true
		}
	}
	return rest, true
}

var shells = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "busybox")

func isShell(name string) bool { return shells[name] }

// readsScriptFromStdin: a shell given no script (no -c, no file) runs what it reads.
func readsScriptFromStdin(c *command) bool {
	if !isShell(c.name) {
		return false
	}
	for _, a := range c.args {
		if !strings.HasPrefix(a, "-") || (!strings.HasPrefix(a, "--") && strings.Contains(a, "c")) {
			return false
		}
	}
	return true
}

// shellScript finds the script of `sh [options] -c script`: -c may be grouped with
// other short options (-ec, -lc).
func shellScript(args []string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			return "", false
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") && i+1 < len(args) {
			return args[i+1], true
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return "", false // a script file: sh script.sh
		}
	}
	return "", false
}

// normPath is the form path patterns compare: ~ for the home directory, cleaned,
// no trailing slash.
func normPath(p, home string) string {
	p = strings.TrimSpace(p)
	for _, h := range []string{"${HOME}", "$HOME"} {
		if p == h || strings.HasPrefix(p, h+"/") {
			p = "~" + p[len(h):]
		}
	}
	if home != "" && home != "/" && (p == home || strings.HasPrefix(p, home+"/")) {
		p = "~" + p[len(home):]
	}
	if p == "" {
		return ""
	}
	p = path.Clean(p)
	return p
}

// shortFlags reports whether args (options before "--") contain any of the letters as
// a short option (alone or grouped, -rf) or any of the long options.
func hasFlag(args []string, letters string, long ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if strings.HasPrefix(a, "--") {
			name, _, _ := strings.Cut(a, "=")
			for _, l := range long {
				if name == l {
					return true
				}
			}
			continue
		}
		if len(a) > 1 && a[0] == '-' && strings.ContainsAny(a[1:], letters) && isFlagGroup(a[1:]) {
			return true
		}
	}
	return false
}

// isFlagGroup: a short-option group is letters only (so -9 or -1 are not groups).
func isFlagGroup(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// operands are the arguments that are not options (everything after "--" counts).
func operands(args []string) []string {
	var out []string
	dashdash := false
	for _, a := range args {
		switch {
		case dashdash:
			out = append(out, a)
		case a == "--":
			dashdash = true
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			out = append(out, a)
		}
	}
	return out
}
