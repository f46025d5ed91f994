// Package danger decides whether a shell command needs the user's approval before the
// built-in runtime's terminal tool runs it: a table of dangerous-command patterns, each
// with a key and a description, matched against every simple command the line runs
// (through &&, ;, |, $( ), backticks, bash -c '...', eval, sudo, xargs, find -exec ...).
//
// It is a guard against mistakes, not a sandbox: a command can always hide what it does
// (variables, scripts written to files, other interpreters). Quoted text that is only
// printed (echo "rm -rf /") does not match; text piped into a shell does.
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

	cmd  func(c *command, home string) bool
	text func(src string) bool
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

// Check returns the patterns command matches, in table order, each once; nil when it
// looks harmless. The user's home directory (by its absolute path too) counts as ~.
func Check(command string) []Match { return check(command, homeDir) }

func check(command, home string) []Match {
	a := analyse(command)
	var out []Match
	for _, p := range table {
		if matches(&p, a, home) {
			out = append(out, Match{Key: p.Key, Description: p.Description, Hardline: p.Hardline})
		}
	}
	return out
}

func matches(p *Pattern, a *analysis, home string) bool {
	if p.text != nil {
		for _, src := range a.raw {
			if p.text(src) {
				return true
			}
		}
	}
	if p.cmd != nil {
		for _, c := range a.cmds {
			if p.cmd(c, home) {
				return true
			}
		}
	}
	return false
}
