// Package stderrtail chooses, from the last lines an agent or server wrote on stderr
// before it failed, the few that say why: the error, fatal and panic lines (the first
// line of a Rust or Go panic, a Python exception's own line under its traceback), then
// the last lines that are neither stack frames nor routine log lines. A crash message
// quotes these instead of the last three lines, which for a Rust agent were backtrace
// frames while its error line above them was lost (issue 26, item 2).
package stderrtail

import (
	"regexp"
	"strings"
)

// errorLine matches a line that carries an error: a level or keyword of failure, a
// panic's first line (Rust: "thread 'main' panicked at", Go: "panic:"), an exception's
// line ("ValueError: …", "Error: …", "TypeError: …" in Node), errno names.
var errorLine = regexp.MustCompile(`(?i)(\b(error|fatal|panic(ked)?|exception|critical|failed|failure|denied|refused|cannot|can't|could not|unable to|not found|no such file|invalid|unauthori[sz]ed|forbidden|EROFS|EACCES|EPERM|ENOENT|ECONNREFUSED)\b|^\w*(Error|Exception)\b)`)

// frameLine matches a stack frame or backtrace line: Rust ("   3: core::…", "at
// /rustc/…"), Go ("\t/path/x.go:12 +0x1f", "goroutine 1 [running]:", "main.f(…)"),
// Python ("  File \"x.py\", line 3, in f" and the source line under it, "Traceback
// (most recent call last):"), Node and Java ("    at f (file.js:1:2)"), and the hint
// lines Rust prints about backtraces.
var frameLine = regexp.MustCompile(`^(\s+\d+:\s|\s+at\s|\s+File "|\t\S+:\d+|goroutine \d+ \[|Traceback \(most recent call last\)|note: run with ` + "`RUST_BACKTRACE" + `|stack backtrace:|[\w./*()]+\(.*\)$)`)

// routineLine matches a log line of a routine level (INFO, DEBUG, TRACE, NOTICE, as
// log levels are written: upper case, level=info, [info], glog's I1203): in a crash
// message it is noise, however late it came.
var routineLine = regexp.MustCompile(`(^|[\s\[|:"=])(INFO|DEBUG|TRACE|NOTICE|VERBOSE)([\]\s|:"]|$)|(?i:level=(info|debug|trace)\b)|(?i:\[(info|debug|trace)\])|^[IDT]\d{4} `)

// Telling returns at most n of lines (oldest first, as written) that best say why the
// process failed: every error line that is not a routine log line, in order, keeping the
// first and the last ones when there are more than n; then, while there is room, the
// last lines that are neither frames nor routine log lines nor blank. The lines chosen
// keep their order. With no such line at all it returns the last n non-blank lines.
func Telling(lines []string, n int) []string {
	if n <= 0 || len(lines) == 0 {
		return nil
	}
	var errs, plain []int
	underFrame := false // the line before was a Python frame: its source line follows
	for i, l := range lines {
		t := strings.TrimSpace(l)
		source := underFrame && t != "" && l != t
		underFrame = strings.HasPrefix(t, `File "`)
		switch {
		case t == "":
		case source, frameLine.MatchString(l) || frameLine.MatchString(t):
		case routineLine.MatchString(t) && !strings.Contains(strings.ToLower(t), "panicked"):
		case errorLine.MatchString(t):
			errs = append(errs, i)
		default:
			plain = append(plain, i)
		}
	}
	chosen := map[int]bool{}
	switch {
	case len(errs) > n:
		// The first error (often the cause) and the last ones (where it ended).
		chosen[errs[0]] = true
		for _, i := range errs[len(errs)-(n-1):] {
			chosen[i] = true
		}
	default:
		for _, i := range errs {
			chosen[i] = true
		}
	}
	for k := len(plain) - 1; k >= 0 && len(chosen) < n; k-- {
		chosen[plain[k]] = true
	}
	if len(chosen) == 0 {
		for k := len(lines) - 1; k >= 0 && len(chosen) < n; k-- {
			if strings.TrimSpace(lines[k]) != "" {
				chosen[k] = true
			}
		}
	}
	out := make([]string, 0, len(chosen))
	for i, l := range lines {
		if chosen[i] {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// TellingText is Telling over text split into lines.
func TellingText(text string, n int) []string {
	return Telling(strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n"), n)
}
