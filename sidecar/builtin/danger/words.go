package danger

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Words as the shell makes them: quote removal, brace expansion, parameter and
// substitution parts (what is only known at run time), and the escapes of $'...',
// double quotes and here-documents.

// words evaluates one word of the syntax tree: quotes removed, brace expansion done
// (so it may be several words), substitutions analysed.
func (a *analysis) words(w *syntax.Word, e env) []word {
	if w == nil || len(w.Parts) == 0 {
		return nil
	}
	start, end := e.span(w)
	braces := 0
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			braces += strings.Count(l.Value, "{")
		}
	}
	if braces > 64 {
		// Too many to expand: what it becomes is not checked.
		v := a.wordValue(w, e, false)
		v.dynamic = true
		v.start, v.end = start, end
		return []word{v}
	}
	if syntax.SplitBraces(w) {
		alts, ok := expandBraces(w.Parts)
		if !ok {
			v := a.wordValue(w, e, false)
			v.dynamic = true
			v.start, v.end = start, end
			return []word{v}
		}
		out := make([]word, 0, len(alts))
		for _, parts := range alts {
			v := a.wordValue(&syntax.Word{Parts: parts}, e, false)
			v.start, v.end = start, end
			out = append(out, v)
		}
		return out
	}
	v := a.wordValue(w, e, false)
	v.start, v.end = start, end
	return []word{v}
}

// expandBraces expands the brace expressions of a word's parts into alternatives.
func expandBraces(parts []syntax.WordPart) ([][]syntax.WordPart, bool) {
	out := [][]syntax.WordPart{nil}
	for _, p := range parts {
		be, ok := p.(*syntax.BraceExp)
		if !ok {
			for i := range out {
				out[i] = append(out[i], p)
			}
			continue
		}
		var alts [][]syntax.WordPart
		if be.Sequence {
			seq, ok := braceSequence(be)
			if !ok {
				return nil, false
			}
			for _, s := range seq {
				alts = append(alts, []syntax.WordPart{&syntax.Lit{Value: s}})
			}
		} else {
			for _, el := range be.Elems {
				sub, ok := expandBraces(el.Parts)
				if !ok {
					return nil, false
				}
				alts = append(alts, sub...)
			}
		}
		var next [][]syntax.WordPart
		for _, o := range out {
			for _, alt := range alts {
				n := append(append([]syntax.WordPart{}, o...), alt...)
				next = append(next, n)
				if len(next) > maxBraceWords {
					return nil, false
				}
			}
		}
		out = next
	}
	return out, true
}

// braceSequence expands {x..y[..incr]} of numbers or single letters.
func braceSequence(be *syntax.BraceExp) ([]string, bool) {
	if len(be.Elems) < 2 {
		return nil, false
	}
	from, to := be.Elems[0].Lit(), be.Elems[1].Lit()
	incr := 1
	if len(be.Elems) > 2 {
		n, err := strconv.Atoi(be.Elems[2].Lit())
		if err != nil || n == 0 {
			return nil, false
		}
		incr = max(n, -n)
	}
	var out []string
	x, err1 := strconv.Atoi(from)
	y, err2 := strconv.Atoi(to)
	if err1 != nil || err2 != nil {
		if utf8.RuneCountInString(from) != 1 || utf8.RuneCountInString(to) != 1 {
			return nil, false
		}
		rx, _ := utf8.DecodeRuneInString(from)
		ry, _ := utf8.DecodeRuneInString(to)
		x, y = int(rx), int(ry)
		step := incr
		if y < x {
			step = -incr
		}
		for i := x; (step > 0 && i <= y) || (step < 0 && i >= y); i += step {
			out = append(out, string(rune(i)))
			if len(out) > maxBraceWords {
				return nil, false
			}
		}
		return out, true
	}
	step := incr
	if y < x {
		step = -incr
	}
	for i := x; (step > 0 && i <= y) || (step < 0 && i >= y); i += step {
		out = append(out, strconv.Itoa(i))
		if len(out) > maxBraceWords {
			return nil, false
		}
	}
	return out, true
}

// wordValue evaluates a word's parts into one word (no brace expansion). heredoc: the
// word is a here-document body (no quote removal, only expansions).
func (a *analysis) wordValue(w *syntax.Word, e env, heredoc bool) word {
	var v word
	var sb strings.Builder
	a.parts(w.Parts, e, false, heredoc, &sb, &v)
	v.text = sb.String()
	if len(w.Parts) == 1 {
		if cs, ok := w.Parts[0].(*syntax.CmdSubst); ok && cs != nil {
			v.sub = true
		}
	}
	return v
}

func (a *analysis) parts(parts []syntax.WordPart, e env, inDQ, heredoc bool, sb *strings.Builder, v *word) {
	for _, p := range parts {
		switch x := p.(type) {
		case *syntax.Lit:
			switch {
			case heredoc:
				sb.WriteString(unescapeHeredoc(x.Value))
			case inDQ:
				sb.WriteString(unescapeDQ(x.Value))
			default:
				s, glob := unescapeLit(x.Value)
				sb.WriteString(s)
				v.glob = v.glob || glob
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				sb.WriteString(ansiC(x.Value))
			} else {
				sb.WriteString(x.Value)
			}
		case *syntax.DblQuoted:
			a.parts(x.Parts, e, true, false, sb, v)
		case *syntax.ParamExp:
			if x.Param != nil && x.Param.Value == "HOME" && isSimpleParam(x) {
				sb.WriteString("$HOME")
				continue
			}
			v.dynamic = true
			if x.Param != nil {
				sb.WriteString("$" + x.Param.Value)
			} else {
				sb.WriteString("$?")
			}
			v.subCmds = append(v.subCmds, a.subs(x, e)...)
		case *syntax.CmdSubst:
			v.dynamic = true
			sb.WriteString("$(…)")
			k := len(a.cmds)
			a.stmtsDeeper(x.Stmts, x, e)
			v.subCmds = append(v.subCmds, a.cmds[k:]...)
		case *syntax.ProcSubst:
			v.dynamic = true
			sb.WriteString("<(…)")
			k := len(a.cmds)
			a.stmtsDeeper(x.Stmts, x, e)
			v.subCmds = append(v.subCmds, a.cmds[k:]...)
		case *syntax.ArithmExp:
			v.dynamic = true
			sb.WriteString("$((…))")
			v.subCmds = append(v.subCmds, a.subs(x, e)...)
		case *syntax.ExtGlob:
			v.glob = true
			sb.WriteString(x.Op.String())
			if x.Pattern != nil {
				sb.WriteString(x.Pattern.Value)
			}
			sb.WriteString(")")
		case *syntax.BraceExp:
			// Left by SplitBraces only when it could not be expanded; keep its text.
			v.dynamic = true
		default:
			v.dynamic = true
			v.subCmds = append(v.subCmds, a.subs(p, e)...)
		}
	}
}

// isSimpleParam reports whether p is $NAME or ${NAME} with nothing else.
func isSimpleParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && !p.Length && !p.Width && !p.IsSet && p.Index == nil && p.Slice == nil &&
		p.Repl == nil && p.Exp == nil && len(p.Modifiers) == 0 && p.NestedParam == nil && p.Flags == nil && p.Names == 0
}

// unescapeLit removes backslash escapes of an unquoted literal and reports whether it
// has an unquoted glob character.
func unescapeLit(s string) (string, bool) {
	if !strings.ContainsAny(s, "\\*?[") {
		return s, false
	}
	var sb strings.Builder
	glob := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
			sb.WriteByte(s[i])
			continue
		}
		if ch == '*' || ch == '?' || ch == '[' {
			glob = true
		}
		sb.WriteByte(ch)
	}
	return sb.String(), glob
}

// unescapeDQ removes the backslash escapes double quotes honour.
func unescapeDQ(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

func unescapeHeredoc(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// ansiC decodes the escapes of a $'...' string.
func ansiC(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			sb.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case 'a':
			sb.WriteByte(7)
		case 'b':
			sb.WriteByte(8)
		case 'e', 'E':
			sb.WriteByte(27)
		case 'f':
			sb.WriteByte(12)
		case 'v':
			sb.WriteByte(11)
		case '\\', '\'', '"', '?':
			sb.WriteByte(c)
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				j++
			}
			if n, err := strconv.ParseUint(s[i+1:j], 16, 8); err == nil {
				sb.WriteByte(byte(n))
				i = j - 1
			} else {
				sb.WriteString("\\x")
			}
		case 'u', 'U':
			size := 4
			if c == 'U' {
				size = 8
			}
			j := i + 1
			for j < len(s) && j < i+1+size && isHex(s[j]) {
				j++
			}
			if n, err := strconv.ParseUint(s[i+1:j], 16, 32); err == nil && j > i+1 {
				sb.WriteRune(rune(n))
				i = j - 1
			} else {
				sb.WriteByte('\\')
				sb.WriteByte(c)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			sb.WriteByte(byte(n))
			i = j - 1
		case 'c':
			if i+1 < len(s) {
				sb.WriteByte(s[i+1] & 0x1f)
				i++
			}
		default:
			sb.WriteByte('\\')
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}
