package danger

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The analysis of a command line on the syntax tree of mvdan.cc/sh/v3/syntax (the
// parser behind shfmt): every simple command the line can run is found, wherever it
// sits (pipelines, lists, loops, conditionals, case arms, functions, subshells, blocks,
// command and process substitutions, here-documents fed to a shell, scripts handed to
// bash -c, eval, su -c, find -exec, xargs, watch ...). What cannot be known before it
// runs is a finding of its own, which asks: a command word that is a variable, a
// substitution or a glob; a script built at run time (eval "$x", bash -c "$x", a
// here-string of a variable fed to a shell, another command's output piped into one);
// decoded data run as a script; nesting past maxDepth; text the parser could not read.

// maxDepth bounds nested analysis (bash -c inside $( ) inside eval ...); deeper asks.
const maxDepth = 8

// maxSource bounds how much of a command line is analysed (bytes); a longer line asks.
const maxSource = 256 << 10

// maxCommands bounds how many simple commands are analysed; a line with more asks.
const maxCommands = 10000

// maxBraceWords bounds brace expansion of one word ({a,b}{c,d} ...); more asks.
const maxBraceWords = 256

// word is one word of a simple command after quote removal and brace expansion.
type word struct {
	text string
	// dynamic: part of the value is only known at run time (a parameter expansion other
	// than $HOME, a command or process substitution, arithmetic).
	dynamic bool
	// glob: an unquoted *, ? or [ (the shell may turn it into other words).
	glob bool
	// sub: the whole word is one command substitution ($(...) or `...`).
	sub bool
	// subCmds are the commands its substitutions run.
	subCmds []*command
	// start, end are byte offsets of the word in the analysed line (0, 0 when unknown).
	start, end int
}

type redirect struct {
	op      string // ">", ">>", ">|", "&>", "&>>", "<", "<<", "<<-", "<<<", "<>", ">&", "<&"
	target  string // the word (for here-documents: the body)
	dynamic bool
}

// writes reports whether a redirection writes its target.
func (r redirect) writes() bool {
	switch r.op {
	case ">", ">>", ">|", "&>", "&>>", "<>", ">&":
		return true
	}
	return false
}

// command is one simple command as a pattern sees it: after leading assignments and
// wrappers (sudo, env, nohup, xargs, timeout ...) are taken off.
type command struct {
	name      string     // base name of the program, e.g. "rm" for /bin/rm
	nameWord  word       // the command word
	args      []string   // its arguments, dequoted
	words     []word     // the same arguments with their substitutions
	redirects []redirect // its redirections
	// privileged: a wrapper ran it as another user (sudo, doas, su, pkexec, run0).
	privileged bool
	// fromInput: a wrapper runs it once per line of its input (xargs, parallel).
	fromInput bool
	// stdinFrom is the command before it in its pipeline (nil when none).
	stdinFrom *command
	// assigns are the values of its variable assignments (X=value cmd, or X=value
	// alone): a path put in a variable is a path named.
	assigns []string
	// start, end: byte offsets of the command in the analysed line.
	start, end int
}

// finding is something the analysis could not check: its key names a pattern.
type finding struct {
	key        string
	detail     string
	start, end int
}

// Finding keys (rows of the table).
const (
	findDynamicCommand = "dynamic_command"
	findDynamicScript  = "dynamic_script"
	findDecodedScript  = "decoded_script"
	findTooDeep        = "nested_too_deep"
	findUnparsed       = "unparsed_command"
)

// analysis collects the commands of a command line, nested ones included.
type analysis struct {
	cmds     []*command
	raw      []string // every source analysed (the line and each nested script)
	findings []finding
	funcs    map[string]*syntax.FuncDecl
	forkBomb bool
	home     string
}

// env is where a source being analysed sits in the line.
type env struct {
	depth int
	// exact: positions in this source map to the line by adding base; otherwise every
	// command of it is shown at anchor.
	exact       bool
	base        int
	anchorStart int
	anchorEnd   int
}

func (e env) deeper() env { e.depth++; return e }

func (e env) span(n syntax.Node) (int, int) {
	if !e.exact || n == nil {
		return e.anchorStart, e.anchorEnd
	}
	s, t := n.Pos(), n.End()
	if st, ok := n.(*syntax.Stmt); ok && st.Cmd != nil {
		// Without the ; or & that ends it.
		t = st.Cmd.End()
		for _, r := range st.Redirs {
			if r.End().After(t) {
				t = r.End()
			}
		}
	}
	if !s.IsValid() || s.IsRecovered() {
		return e.anchorStart, e.anchorEnd
	}
	start := int(s.Offset()) + e.base
	end := start
	if t.IsValid() && !t.IsRecovered() {
		end = int(t.Offset()) + e.base
	}
	return start, end
}

// within returns the env of a source nested at [start, end) of this one.
func (e env) nested(start, end int) env {
	return env{depth: e.depth + 1, anchorStart: start, anchorEnd: end}
}

func analyse(src, home string) *analysis {
	a := &analysis{funcs: map[string]*syntax.FuncDecl{}, home: home}
	if len(src) > maxSource {
		a.find(findUnparsed, fmt.Sprintf("the command is longer than %d KiB", maxSource>>10), 0, 0)
		src = src[:maxSource]
	}
	a.script(src, env{exact: true, anchorEnd: len(src)})
	return a
}

func (a *analysis) find(key, detail string, start, end int) {
	for _, f := range a.findings {
		if f.key == key && f.start == start && f.end == end {
			return
		}
	}
	a.findings = append(a.findings, finding{key: key, detail: detail, start: start, end: end})
}

// script analyses one source: the line itself or a script nested in it.
func (a *analysis) script(src string, e env) []*command {
	if strings.TrimSpace(src) == "" {
		return nil
	}
	if e.depth > maxDepth {
		a.find(findTooDeep, "", e.anchorStart, e.anchorEnd)
		return nil
	}
	a.raw = append(a.raw, src)
	if isForkBomb(src) {
		a.forkBomb = true
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.RecoverErrors(16)).Parse(strings.NewReader(src), "")
	if err != nil || recovered(f) {
		detail := "the shell may still run the part before the error"
		if err != nil {
			detail = err.Error()
		}
		start, end := e.anchorStart, e.anchorEnd
		if e.exact {
			start, end = e.base, e.base+len(src)
		}
		a.find(findUnparsed, detail, start, end)
	}
	if f == nil {
		return nil
	}
	n := len(a.cmds)
	a.stmts(f.Stmts, e, nil)
	return a.cmds[n:]
}

// recovered reports whether the parser had to invent a missing token.
func recovered(f *syntax.File) bool {
	if f == nil {
		return false
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if found || n == nil {
			return false
		}
		if n.Pos().IsRecovered() || n.End().IsRecovered() {
			found = true
			return false
		}
		return true
	})
	return found
}

func (a *analysis) stmts(list []*syntax.Stmt, e env, stdin *command) {
	for i, s := range list {
		in := stdin
		if i > 0 {
			in = nil
		}
		a.stmt(s, e, in)
	}
}

// stmt analyses one statement and returns its last simple command (what a pipe after
// it reads from), nil for a compound one.
func (a *analysis) stmt(s *syntax.Stmt, e env, stdin *command) *command {
	if s == nil || len(a.cmds) > maxCommands {
		if len(a.cmds) > maxCommands {
			a.find(findUnparsed, "the command line is too complex to check", e.anchorStart, e.anchorEnd)
		}
		return nil
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		return a.call(c, s, e, stdin)
	case nil:
		// Redirections only: "> file" truncates, "< x" reads.
		if len(s.Redirs) > 0 {
			return a.pseudo(s, e)
		}
		return nil
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			left := a.stmt(c.X, e, stdin)
			return a.stmt(c.Y, e, left)
		default:
			a.stmt(c.X, e, stdin)
			return a.stmt(c.Y, e, nil)
		}
	case *syntax.Block:
		a.stmts(c.Stmts, e, stdin)
	case *syntax.Subshell:
		a.stmts(c.Stmts, e, stdin)
	case *syntax.IfClause:
		for cl := c; cl != nil; cl = cl.Else {
			a.stmts(cl.Cond, e, nil)
			a.stmts(cl.Then, e, nil)
		}
	case *syntax.WhileClause:
		a.stmts(c.Cond, e, stdin)
		a.stmts(c.Do, e, nil)
	case *syntax.ForClause:
		a.subs(c.Loop, e)
		a.stmts(c.Do, e, nil)
	case *syntax.CaseClause:
		a.subs(c.Word, e)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				a.subs(p, e)
			}
			a.stmts(it.Stmts, e, nil)
		}
	case *syntax.FuncDecl:
		name := ""
		if c.Name != nil {
			name = c.Name.Value
		}
		a.funcs[name] = c
		if selfPiping(c, name) {
			a.forkBomb = true
		}
		a.stmt(c.Body, e, nil)
	case *syntax.TimeClause:
		return a.stmt(c.Stmt, e, stdin)
	case *syntax.CoprocClause:
		a.stmt(c.Stmt, e, nil)
	case *syntax.DeclClause, *syntax.LetClause, *syntax.ArithmCmd, *syntax.TestClause, *syntax.TestDecl:
		a.subs(c, e)
	default:
		a.subs(c, e)
	}
	if len(s.Redirs) > 0 {
		// Redirections of a compound command apply to all of it.
		a.pseudo(s, e)
	}
	return nil
}

// pseudo records the redirections of a statement that has no simple command of its
// own as a command without a name.
func (a *analysis) pseudo(s *syntax.Stmt, e env) *command {
	c := &command{}
	c.start, c.end = e.span(s)
	c.redirects = a.redirects(s.Redirs, e)
	a.cmds = append(a.cmds, c)
	return c
}

// subs analyses the command and process substitutions anywhere below n.
func (a *analysis) subs(n syntax.Node, e env) []*command {
	if n == nil {
		return nil
	}
	var out []*command
	syntax.Walk(n, func(x syntax.Node) bool {
		switch x := x.(type) {
		case *syntax.CmdSubst:
			k := len(a.cmds)
			a.stmtsDeeper(x.Stmts, x, e)
			out = append(out, a.cmds[k:]...)
			return false
		case *syntax.ProcSubst:
			k := len(a.cmds)
			a.stmtsDeeper(x.Stmts, x, e)
			out = append(out, a.cmds[k:]...)
			return false
		}
		return true
	})
	return out
}

func (a *analysis) stmtsDeeper(list []*syntax.Stmt, at syntax.Node, e env) {
	d := e.deeper()
	if d.depth > maxDepth {
		start, end := e.span(at)
		a.find(findTooDeep, "", start, end)
		return
	}
	a.stmts(list, d, nil)
}

func (a *analysis) redirects(rs []*syntax.Redirect, e env) []redirect {
	var out []redirect
	for _, r := range rs {
		rd := redirect{op: r.Op.String()}
		if r.Hdoc != nil {
			w := a.wordValue(r.Hdoc, e, true)
			rd.target, rd.dynamic = w.text, w.dynamic
		} else if r.Word != nil {
			ws := a.words(r.Word, e)
			if len(ws) > 0 {
				rd.target, rd.dynamic = ws[0].text, ws[0].dynamic
			}
		}
		out = append(out, rd)
	}
	return out
}

// call analyses a simple command.
func (a *analysis) call(ce *syntax.CallExpr, s *syntax.Stmt, e env, stdin *command) *command {
	c := &command{stdinFrom: stdin}
	for _, as := range ce.Assigns {
		if as.Value != nil {
			for _, w := range a.words(as.Value, e) {
				c.assigns = append(c.assigns, w.text)
			}
		} else {
			a.subs(as, e)
		}
		if as.Array != nil {
			a.subs(as.Array, e)
		}
	}
	var ws []word
	for _, w := range ce.Args {
		ws = append(ws, a.words(w, e)...)
	}
	c.start, c.end = e.span(s)
	c.redirects = a.redirects(s.Redirs, e)
	if len(ws) == 0 {
		if len(c.redirects) == 0 && len(c.assigns) == 0 {
			return nil
		}
		a.cmds = append(a.cmds, c)
		return c
	}
	return a.simple(c, ws, s, e)
}

// simple finishes a command from its words: wrappers taken off, the command word
// checked, nested scripts analysed.
func (a *analysis) simple(c *command, ws []word, s *syntax.Stmt, e env) *command {
	for len(ws) > 0 {
		if ws[0].dynamic || ws[0].glob {
			break
		}
		name := base(ws[0].text)
		if name == "env" {
			if script, ok := envSplitString(ws[1:]); ok {
				// env -S 'cmd args' runs the split string.
				a.nestedScript(script, c, e)
			}
		}
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
						for _, x := range a.scriptWord(ws[i+2], c, e) {
							x.privileged = true
						}
					}
				}
				c.name, c.nameWord = name, ws[0]
				c.words = ws[1:]
				c.args = texts(c.words)
				a.cmds = append(a.cmds, c)
				return c
			}
		}
		if name == "xargs" || name == "parallel" {
			c.fromInput = true
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
	c.nameWord = ws[0]
	c.name = base(ws[0].text)
	c.words = ws[1:]
	c.args = texts(c.words)
	a.cmds = append(a.cmds, c)
	if ws[0].dynamic || ws[0].glob {
		a.find(findDynamicCommand, "", ws[0].start, ws[0].end)
		if ws[0].start == ws[0].end {
			a.findings[len(a.findings)-1].start, a.findings[len(a.findings)-1].end = c.start, c.end
		}
		return c
	}
	a.innerScripts(c, s, e)
	return c
}
