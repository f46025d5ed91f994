package danger

import (
	"regexp"
	"strings"
)

// What the table's code patterns look at: downloaded or inline code handed to a shell
// or an interpreter, and fork bombs.

var downloaders = set("curl", "wget", "fetch", "http", "https", "xh", "aria2c", "lwp-request", "GET")

var interpreters = set("python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "deno", "bun", "lua", "Rscript", "osascript")

func isInterpreter(name string) bool {
	return isShell(name) || interpreters[name] || strings.HasPrefix(name, "python3.")
}

// runsCode reports whether c runs the code it reads on stdin: a shell with no -c and
// no script file (or with -s), or an interpreter with no inline code, module or file.
func runsCode(c *command) bool {
	if isShell(c.name) {
		for _, a := range c.args {
			if a == "--" || a == "-" {
				return true
			}
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
				if strings.Contains(a, "c") {
					return false
				}
				if strings.Contains(a, "s") {
					return true
				}
				continue
			}
			if strings.HasPrefix(a, "--") || strings.HasPrefix(a, "+") {
				continue
			}
			return false // a script file
		}
		return true
	}
	if !isInterpreter(c.name) {
		return false
	}
	for _, a := range c.args {
		switch {
		case a == "-":
			return true
		case a == "-c" || a == "-m" || a == "-e" || a == "-E" || a == "-r" || a == "--eval" || a == "-p" || a == "--print":
			return false
		case strings.HasPrefix(a, "-"):
		default:
			return false
		}
	}
	return true
}

// subsDownload reports whether a word's substitutions run a downloader.
func subsDownload(w word) bool {
	for _, c := range w.subCmds {
		if downloaders[c.name] {
			return true
		}
	}
	return false
}

var (
	funcDefRE    = regexp.MustCompile(`(?:^|[\s;&|(){}])(?:function\s+)?([A-Za-z_:.][A-Za-z0-9_:.-]*)\s*\(\s*\)\s*\{`)
	funcKwRE     = regexp.MustCompile(`function\s+([A-Za-z_:.][A-Za-z0-9_:.-]*)\s*\{`)
	perlForkRE   = regexp.MustCompile(`fork\s*while\s*fork|fork\s*\)?\s*while\s*\(?\s*(1|true)`)
	loopForkRE   = regexp.MustCompile(`(?i)while\s*\(?\s*(1|true)\s*\)?\s*[:{]?\s*(?:do\s+)?[^\n]{0,60}?\bfork\s*\(\s*\)`)
	whitespaceRE = regexp.MustCompile(`\s+`)
)

// isForkBomb finds a shell function that pipes itself into itself (:(){ :|:& };:),
// and the perl and python loops of fork().
func isForkBomb(src string) bool {
	if perlForkRE.MatchString(src) || loopForkRE.MatchString(src) {
		return true
	}
	compact := whitespaceRE.ReplaceAllString(src, "")
	for _, re := range []*regexp.Regexp{funcDefRE, funcKwRE} {
		for _, m := range re.FindAllStringSubmatch(src, -1) {
			name := m[1]
			if strings.Contains(compact, name+"|"+name) {
				return true
			}
		}
	}
	return false
}
