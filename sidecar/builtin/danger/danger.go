// Package danger decides whether a shell command needs the user's approval before the
// built-in runtime's terminal tool runs it: a table of dangerous-command patterns, each
// with a key and a description, matched against every simple command the line can run,
// found on the syntax tree of mvdan.cc/sh/v3/syntax (parse.go). What the analysis
// cannot check before the command runs (a command word built at run time, eval of a
// variable, decoded data fed to a shell, nesting past the limit, unparseable text) is a
// row of the table too, and asks.
//
// Commands run inside the sandbox (package sandbox); the table is what explains to the
// user why a command looks dangerous, not the only wall. docs/sandbox.md lists it.
package danger

import (
	"os"
	"slices"
)

// Pattern is one row of the table.
type Pattern struct {
	// Key names the pattern in approval frames, session grants and the host's allowlist.
	Key string
	// Description says what the command does, for the approval card.
	Description string
	// Hardline patterns are refused even in YOLO mode and even when allowlisted.
	Hardline bool
	// Example is a command the pattern matches; NearMiss one it does not.
	Example, NearMiss string

	cmd  func(c *command, x *scope) bool
	text func(src string) bool
	// finding: the pattern is a finding of the analysis (something it could not check).
	finding bool
}

// scope is what patterns know beyond the command: the home directory and the paths the
// agent must never touch (the app's data folder).
type scope struct {
	home      string
	protected []string
	// The ways of writing each path a pattern looks for (pathForms), computed once.
	protectedForms, secretForms, profileForms [][]string
}

func newScope(home string, protected []string) *scope {
	x := &scope{home: home, protected: protected}
	for _, p := range protected {
		x.protectedForms = append(x.protectedForms, pathForms(p, home))
	}
	for _, d := range secretDirs {
		x.secretForms = append(x.secretForms, pathForms("~/"+d, home))
	}
	for p := range shellProfiles {
		x.profileForms = append(x.profileForms, pathForms(p, home))
	}
	return x
}

// Match is a pattern a command matched. Start and End are byte offsets into the
// command of the part that matched (both 0 when it is not known).
type Match struct {
	Key         string
	Description string
	Hardline    bool
	Start, End  int
}

// Patterns returns a copy of the table, in order: hardline patterns first.
func Patterns() []Pattern { return slices.Clone(table) }

// IsHardline reports whether key names a hardline pattern.
func IsHardline(key string) bool {
	for _, p := range table {
		if p.Key == key {
			return p.Hardline
		}
	}
	return false
}

// Known reports whether key names a pattern of the table.
func Known(key string) bool {
	for _, p := range table {
		if p.Key == key {
			return true
		}
	}
	return false
}

var homeDir, _ = os.UserHomeDir()

// Options say what Check knows of the machine: the user's home directory (by its
// absolute path it counts as ~; default the process's) and the protected paths no
// command may name (the app's data folder: naming one is refused).
type Options struct {
	Home      string
	Protected []string
}

// Check returns the patterns command matches, in table order, each once; nil when it
// looks harmless. The user's home directory (by its absolute path too) counts as ~.
func Check(command string) []Match { return CheckWith(command, Options{}) }

// CheckWith is Check with what it knows of the machine.
func CheckWith(command string, o Options) []Match {
	if o.Home == "" {
		o.Home = homeDir
	}
	return checkScope(command, newScope(o.Home, o.Protected))
}

func check(command, home string) []Match {
	return checkScope(command, newScope(home, []string{home + "/.local/share/talaria"}))
}

func checkScope(command string, x *scope) []Match {
	a := analyse(command, x.home)
	var out []Match
	for _, p := range table {
		if m, ok := matches(&p, a, x); ok {
			if m.End > len(command) {
				m.End = len(command)
			}
			if m.Start >= m.End {
				m.Start, m.End = 0, 0
			}
			out = append(out, m)
		}
	}
	return out
}

func matches(p *Pattern, a *analysis, x *scope) (Match, bool) {
	m := Match{Key: p.Key, Description: p.Description, Hardline: p.Hardline}
	if p.finding {
		for _, f := range a.findings {
			if f.key == p.Key {
				m.Start, m.End = f.start, f.end
				return m, true
			}
		}
		return m, false
	}
	if p.text != nil {
		for _, src := range a.raw {
			if p.text(src) {
				m.End = len(a.raw[0])
				return m, true
			}
		}
	}
	if p.Key == "fork_bomb" && a.forkBomb {
		m.End = len(a.raw[0])
		return m, true
	}
	if p.cmd != nil {
		for _, c := range a.cmds {
			if p.cmd(c, x) {
				m.Start, m.End = c.start, c.end
				return m, true
			}
		}
	}
	return m, false
}
