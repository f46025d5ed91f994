// Package uifont names the font family the page's `system-ui` stands for, so the page
// can ask WebKit for that family by name (issue 16).
//
// WebKitGTK looks `system-ui` up in fontconfig as a family name. Fontconfig's own
// configuration aliases it to a short list of desktop fonts (60-latin.conf: Cantarell,
// Noto Sans UI, Segoe UI...); when none of them is installed, WebKit's lookup of
// `system-ui` fails for every font size and weight the page uses before it falls back
// to the next family in the CSS list. On a machine without those fonts that cost the
// first style pass about 10 ms of a cold start (measured in the window benchmark).
// Asking for the family fontconfig matches `system-ui` to gives the same font without
// the failed lookups.
package uifont

import (
	"strings"
	"unicode"
)

// CSSFamily returns family as a CSS string literal ("Noto Sans" with quotes), safe
// anywhere in CSS and inside an HTML <style> element: every character other than an
// ASCII letter, digit, space, '-' or '_' is written as a CSS hex escape (CSS Syntax
// Level 3, §4.3.7), so no quote, backslash, '<' or newline reaches the output as
// itself. It returns "" for a name that is empty, longer than 200 bytes, or holds a
// control character, which no installed family has.
func CSSFamily(family string) string {
	family = strings.TrimSpace(family)
	if family == "" || len(family) > 200 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range family {
		switch {
		case unicode.IsControl(r) || r == unicode.ReplacementChar:
			return ""
		case r < 0x80 && (r == ' ' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			b.WriteString("\\" + strings.ToLower(strings.TrimLeft(hex6(r), "0")) + " ")
		}
	}
	b.WriteByte('"')
	return b.String()
}

func hex6(r rune) string {
	const digits = "0123456789ABCDEF"
	var out [6]byte
	for i := 5; i >= 0; i-- {
		out[i] = digits[r&0xF]
		r >>= 4
	}
	return string(out[:])
}
