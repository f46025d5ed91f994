package danger

import "strings"

// A small lexer for the POSIX shell syntax a model writes: enough to find the simple
// commands a command line runs, with quotes, escapes, control operators, redirections
// and command substitutions followed. It never fails: malformed input (an unclosed
// quote, an unbalanced parenthesis) lexes as far as it goes, which errs towards seeing
// more commands, not fewer.

// word is one word of a simple command, its quotes and escapes removed.
type word struct {
	text string
	// redirect marks a redirection operator (">", ">>", "2>", "&>", "<", ">|" ...);
	// the next word of the command is its target.
	redirect bool
	// subs are the sources of the command substitutions inside the word: $(...),
	// `...` and the process substitutions <(...) and >(...). They run too.
	subs []string
	// sub is true when the whole word is one substitution (nothing else in it).
	sub bool
}

// simple is one simple command: its words in order.
type simple []word

// pipeline is simple commands joined by | or |&, in order.
type pipeline []simple

// maxSource bounds how much of a command line is lexed (bytes); the rest is ignored.
const maxSource = 256 << 10

// lex splits src into pipelines (separated by ;, &, &&, ||, newlines and parentheses).
func lex(src string) []pipeline {
	if len(src) > maxSource {
		src = src[:maxSource]
	}
	l := &lexer{src: src}
	l.run()
	l.endPipeline()
	return l.out
}

type lexer struct {
	src string
	i   int

	out  []pipeline
	pipe pipeline
	cmd  simple

	cur     strings.Builder
	inWord  bool
	subs    []string
	onlySub int // substitutions in the current word while it has no other text; -1 once it has
}

func (l *lexer) run() {
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			l.endWord()
			l.i++
		case c == '\n':
			l.endWord()
			l.endPipeline()
			l.i++
		case c == '\\':
			if l.i+1 < len(l.src) {
				if l.src[l.i+1] == '\n' { // line continuation
					l.i += 2
					continue
				}
				l.text(l.src[l.i+1 : l.i+2])
				l.i += 2
			} else {
				l.i++
			}
		case c == '\'':
			end := strings.IndexByte(l.src[l.i+1:], '\'')
			if end < 0 {
				l.text(l.src[l.i+1:])
				l.i = len(l.src)
			} else {
				l.text(l.src[l.i+1 : l.i+1+end])
				l.i += end + 2
			}
			l.inWord = true
		case c == '"':
			l.double()
		case c == '`':
			l.backtick()
		case c == '$' && l.peek(1) == '(':
			end := matchParen(l.src, l.i+1)
			l.substitution(l.src[l.i+2:end], l.src[l.i:min(end+1, len(l.src))])
			l.i = end + 1
		case (c == '<' || c == '>') && l.peek(1) == '(':
			end := matchParen(l.src, l.i+1)
			l.substitution(l.src[l.i+2:end], l.src[l.i:min(end+1, len(l.src))])
			l.i = end + 1
		case c == '<' || c == '>':
			l.redirect()
		case c == '&' && l.peek(1) == '>':
			l.redirect()
		case c == ';' || c == '&' || c == '(' || c == ')':
			l.endWord()
			l.endPipeline()
			l.i++
			if c == '&' && l.peek(0) == '&' || c == ';' && l.peek(0) == ';' {
				l.i++
			}
		case c == '|':
			l.endWord()
			if l.peek(1) == '|' { // ||
				l.endPipeline()
				l.i += 2
				continue
			}
			l.endCommand()
			l.i++
			if l.peek(0) == '&' { // |&
				l.i++
			}
		case c == '#' && !l.inWord:
			end := strings.IndexByte(l.src[l.i:], '\n')
			if end < 0 {
				l.i = len(l.src)
			} else {
				l.i += end
			}
		default:
			l.text(l.src[l.i : l.i+1])
			l.i++
		}
	}
	l.endWord()
}

func (l *lexer) peek(off int) byte {
	if l.i+off < len(l.src) {
		return l.src[l.i+off]
	}
	return 0
}

func (l *lexer) text(s string) {
	l.cur.WriteString(s)
	l.inWord = true
	if s != "" {
		l.onlySub = -1
	}
}

func (l *lexer) substitution(inner, raw string) {
	l.subs = append(l.subs, inner)
	l.cur.WriteString(raw)
	l.inWord = true
	if l.onlySub >= 0 {
		l.onlySub++
	}
}

// double reads a double-quoted string: \ escapes only $ ` " \ and newline, and $(...)
// and `...` are still substitutions.
func (l *lexer) double() {
	l.i++
	l.inWord = true
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '"':
			l.i++
			return
		case c == '\\' && l.i+1 < len(l.src) && strings.IndexByte("$`\"\\\n", l.src[l.i+1]) >= 0:
			if l.src[l.i+1] != '\n' {
				l.text(l.src[l.i+1 : l.i+2])
			}
			l.i += 2
		case c == '`':
			l.backtick()
		case c == '$' && l.peek(1) == '(':
			end := matchParen(l.src, l.i+1)
			l.substitution(l.src[l.i+2:end], l.src[l.i:min(end+1, len(l.src))])
			l.i = end + 1
		default:
			l.text(l.src[l.i : l.i+1])
			l.i++
		}
	}
}

func (l *lexer) backtick() {
	start := l.i + 1
	j := start
	for j < len(l.src) && l.src[j] != '`' {
		if l.src[j] == '\\' {
			j++
		}
		j++
	}
	j = min(j, len(l.src))
	inner := strings.NewReplacer("\\`", "`", "\\\\", "\\", "\\$", "$").Replace(l.src[start:j])
	l.substitution(inner, l.src[l.i:min(j+1, len(l.src))])
	l.i = j + 1
}

// redirect reads a redirection operator; digits just before it (2>) belong to it.
func (l *lexer) redirect() {
	prefix := ""
	if l.inWord && l.onlySub == -1 && isDigits(l.cur.String()) {
		prefix = l.cur.String()
		l.cur.Reset()
		l.inWord = false
		l.onlySub = 0
	}
	l.endWord()
	start := l.i
	if l.src[l.i] == '&' {
		l.i++
	}
	for l.i < len(l.src) && (l.src[l.i] == '<' || l.src[l.i] == '>') {
		l.i++
	}
	if l.i < len(l.src) && (l.src[l.i] == '&' || l.src[l.i] == '|') {
		l.i++
	}
	l.cmd = append(l.cmd, word{text: prefix + l.src[start:l.i], redirect: true})
}

func (l *lexer) endWord() {
	if l.inWord {
		w := word{text: l.cur.String(), subs: l.subs, sub: l.onlySub == 1}
		// A lone { or } groups commands; it is not a word of one.
		if !(w.text == "{" || w.text == "}") || len(w.subs) > 0 {
			l.cmd = append(l.cmd, w)
		}
	}
	l.cur.Reset()
	l.inWord = false
	l.subs = nil
	l.onlySub = 0
}

func (l *lexer) endCommand() {
	if len(l.cmd) > 0 {
		l.pipe = append(l.pipe, l.cmd)
	}
	l.cmd = nil
}

func (l *lexer) endPipeline() {
	l.endCommand()
	if len(l.pipe) > 0 {
		l.out = append(l.out, l.pipe)
	}
	l.pipe = nil
}

// matchParen returns the index of the ")" closing the "(" at open, following quotes
// and nested parentheses; len(s) when it is never closed.
func matchParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return len(s)
			}
			i += end + 1
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
