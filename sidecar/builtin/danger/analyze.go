package danger

import (
	"path"
	"regexp"
	"strings"
)

// Helpers of the analysis and the patterns: wrappers, shells, flags, paths.

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

var privilegeWrappers = map[string]bool{"sudo": true, "doas": true, "su": true, "pkexec": true, "run0": true, "runuser": true}

// wrapperOptsWithArg are the wrappers' options that take a separate argument.
var wrapperOptsWithArg = map[string]map[string]bool{
	"sudo":        set("-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R", "--user", "--group", "--host", "--prompt", "--chdir", "--role", "--type", "--other-user", "--close-from", "--command-timeout", "--chroot"),
	"doas":        set("-u", "-C"),
	"pkexec":      set("--user"),
	"run0":        set("-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv", "--unit", "--property", "--description", "--slice", "--nice", "--background"),
	"env":         set("-u", "--unset", "-C", "--chdir", "-S", "--split-string"),
	"nice":        set("-n", "--adjustment"),
	"ionice":      set("-c", "-n", "-p", "-P", "-u", "--class", "--classdata"),
	"timeout":     set("-s", "--signal", "-k", "--kill-after"),
	"xargs":       set("-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--replace", "--max-chars", "--process-slot-var"),
	"stdbuf":      set("-i", "-o", "-e"),
	"chrt":        set(),
	"taskset":     set(),
	"flock":       set("-w", "-E", "--timeout", "--conflict-exit-code"),
	"watch":       set("-n", "-d", "--interval"),
	"parallel":    set("-j", "--jobs", "-S", "--sshlogin", "--joblog", "-a", "--arg-file", "--delay", "--timeout", "-I", "--colsep"),
	"firejail":    set(),
	"systemd-run": set("-u", "--unit", "-p", "--property", "-M", "--machine", "--description", "--slice", "-E", "--setenv", "--uid", "--gid", "--nice", "-D", "--working-directory"),
	"unshare":     set("--setgroups", "-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"),
	"nsenter":     set("-t", "--target", "-S", "--setuid", "-G", "--setgid", "-r", "--root", "-w", "--wd"),
	"strace":      set("-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X"),
	"ltrace":      set("-e", "-o", "-p", "-s", "-u", "-a", "-n"),
	"runuser":     set("-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"),
	"proxychains": set("-f"), "proxychains4": set("-f"),
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
		"time", "exec", "command", "builtin", "unbuffer", "chronic", "caffeinate", "chrt", "taskset", "flock", "watch", "busybox", "setsid", "script",
		"parallel", "torsocks", "proxychains", "proxychains4", "firejail", "systemd-run", "unshare", "nsenter", "chroot",
		"fakeroot", "catchsegv", "strace", "ltrace", "valgrind", "runuser":
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
	case "chroot":
		if len(rest) > 0 { // the new root
			rest = rest[1:]
		}
	case "parallel":
		// parallel cmd ::: args: the command stops at the first ::: or ::::.
		for i, w := range rest {
			if w.text == ":::" || w.text == "::::" {
				rest = rest[:i]
				break
			}
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
			return []word{{text: "sh"}, {text: "-c"}, {text: strings.Join(texts(rest), " "), dynamic: anyDynamic(rest)}}, true
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

// shellScriptIndex finds the script of `sh [options] -c script` among a shell's
// words: -c may be grouped with other short options (-ec, -lc).
func shellScriptIndex(ws []word) (int, bool) {
	for i, w := range ws {
		a := w.text
		if a == "--" {
			return 0, false
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") && i+1 < len(ws) {
			return i + 1, true
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return 0, false // a script file: sh script.sh
		}
	}
	return 0, false
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
