package danger

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

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

	switch {
	case isShell(c.name):
		a.shell(c, e)
	case c.name == "eval":
		words := c.words
		for len(words) > 0 && words[0].text == "eval" && !words[0].dynamic { // eval eval ... is one eval
			words = words[1:]
		}
		if anyDynamic(words) {
			if !anyDownloads(words) {
				a.find(findDynamicScript, "eval of text built at run time", c.start, c.end)
			}
		} else {
			for _, x := range a.nestedScript(strings.Join(texts(words), " "), c, e) {
				x.privileged = x.privileged || c.privileged
			}
		}
		if c.fromInput {
			a.find(findDynamicScript, "eval of the lines another command prints", c.start, c.end)
		}
	case c.name == "source" || c.name == ".":
		if len(c.words) > 0 && c.words[0].dynamic && !c.words[0].sub && len(c.words[0].subCmds) == 0 {
			a.find(findDynamicScript, "a script whose path is only known at run time", c.start, c.end)
		}
		a.stdinScript(c, e, true)
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
					sub := &command{privileged: c.privileged, start: c.start, end: c.end}
					a.simple(sub, append([]word(nil), c.words[i+1:j]...), s, e.deeper())
				}
				i = j
			}
		}
	case c.name == "alias":
		for _, w := range c.words {
			if _, v, ok := strings.Cut(w.text, "="); ok && !w.dynamic {
				a.nestedScript(v, c, e)
			}
		}
	case c.name == "trap":
		if len(c.words) > 1 && !strings.HasPrefix(c.words[0].text, "-") {
			a.scriptWord(c.words[0], c, e)
		}
	case c.name == "git":
		// git -c alias.x='!script' x, git config alias.x '!script': the alias runs a shell.
		for i, w := range c.words {
			v := ""
			switch {
			case w.text == "-c" && i+1 < len(c.words):
				v = c.words[i+1].text
			case strings.HasPrefix(w.text, "alias.") && i+1 < len(c.words):
				v = w.text + "=" + c.words[i+1].text
			}
			if k, script, ok := strings.Cut(v, "="); ok && strings.HasPrefix(k, "alias.") && strings.HasPrefix(script, "!") {
				a.nestedScript(script[1:], c, e)
			}
		}
	case isInterpreter(c.name):
		a.stdinScript(c, e, runsCode(c))
	}
	return c
}

// shell analyses what a shell runs: the script of -c, its stdin (a here-document, a
// here-string, the command piped into it), or a script file (not analysed: it runs
// confined like any command).
func (a *analysis) shell(c *command, e env) {
	if i, ok := shellScriptIndex(c.words); ok {
		for _, x := range a.scriptWord(c.words[i], c, e) {
			x.privileged = x.privileged || c.privileged
		}
		if c.fromInput {
			a.find(findDynamicScript, "a shell fed the lines another command prints", c.start, c.end)
		}
		return
	}
	a.stdinScript(c, e, readsScriptFromStdin(c))
}

// stdinScript analyses the script a shell or interpreter reads on stdin, when it does
// (reads): a here-document or here-string, or what the command before it in the
// pipeline prints.
func (a *analysis) stdinScript(c *command, e env, reads bool) {
	if !reads {
		return
	}
	for _, r := range c.redirects {
		switch r.op {
		case "<<<", "<<", "<<-":
			if r.dynamic {
				a.find(findDynamicScript, "a script built at run time fed to "+c.name, c.start, c.end)
			} else if isShell(c.name) {
				for _, x := range a.nestedScript(r.target, c, e) {
					x.privileged = x.privileged || c.privileged
				}
			}
			return
		case "<":
			return // a script file
		}
	}
	p := c.stdinFrom
	if p == nil {
		return
	}
	for q := p; q != nil; q = q.stdinFrom {
		if downloaders[q.name] {
			return // remote_script explains it
		}
	}
	switch {
	case decoders(p):
		a.find(findDecodedScript, p.name, p.start, c.end)
	case downloaders[p.name]:
		// remote_script explains it.
	case (p.name == "echo" || p.name == "printf") && !anyDynamic(p.words):
		if isShell(c.name) {
			for _, x := range a.nestedScript(strings.Join(p.args, " "), c, e) {
				x.privileged = x.privileged || c.privileged
			}
		}
	case p.name == "" && len(p.redirects) == 0:
	default:
		a.find(findDynamicScript, "runs what "+nameOr(p)+" prints as a script", p.start, c.end)
	}
}

func nameOr(c *command) string {
	if c.name == "" {
		return "another command"
	}
	return c.name
}

// scriptWord analyses a word that is a script (bash -c WORD): statically when it is
// known, as a finding when it is built at run time.
func (a *analysis) scriptWord(w word, c *command, e env) []*command {
	if w.dynamic {
		if !downloads(w) { // "$(curl ...)" as the script: remote_script explains it
			a.find(findDynamicScript, "a script built at run time", c.start, c.end)
		}
		return nil
	}
	return a.nestedScript(w.text, c, e)
}

// nestedScript analyses a script nested in command c.
func (a *analysis) nestedScript(src string, c *command, e env) []*command {
	return a.script(src, e.nested(c.start, c.end))
}

// downloads reports whether a word's substitutions run a downloader.
func downloads(w word) bool {
	for _, c := range w.subCmds {
		if downloaders[c.name] {
			return true
		}
	}
	return false
}

func anyDownloads(ws []word) bool {
	for _, w := range ws {
		if downloads(w) {
			return true
		}
	}
	return false
}

func anyDynamic(ws []word) bool {
	for _, w := range ws {
		if w.dynamic {
			return true
		}
	}
	return false
}

// decoders reports whether c turns encoded or compressed data back into text.
func decoders(c *command) bool {
	switch c.name {
	case "base64", "base32", "basenc":
		return hasFlag(c.args, "dD", "--decode")
	case "xxd":
		return hasFlag(c.args, "r", "--revert") || slices2(c.args, "-r", "-revert")
	case "uudecode", "zcat", "gunzip", "bunzip2", "bzcat", "xzcat", "unxz", "unzstd", "zstdcat", "lzcat", "unlzma", "rev", "tac":
		return true
	case "gzip", "bzip2", "xz", "zstd", "lz4", "lzma", "brotli":
		return hasFlag(c.args, "d", "--decompress", "--uncompress")
	case "openssl":
		for _, x := range c.args {
			if x == "-d" || x == "base64" || x == "enc" {
				return true
			}
		}
	case "tr", "sed", "awk", "perl", "python", "python3", "ruby", "node", "printf":
		// Text rewriting in the middle of a pipeline into a shell hides what runs.
		return c.stdinFrom != nil
	case "cut", "fold":
		return c.stdinFrom != nil
	}
	return false
}

func slices2(args []string, xs ...string) bool {
	for _, a := range args {
		for _, x := range xs {
			if a == x {
				return true
			}
		}
	}
	return false
}

// envSplitString finds env -S STRING (or --split-string=STRING).
func envSplitString(ws []word) (string, bool) {
	for i, w := range ws {
		switch {
		case (w.text == "-S" || w.text == "--split-string") && i+1 < len(ws):
			return ws[i+1].text, true
		case strings.HasPrefix(w.text, "--split-string="):
			return strings.TrimPrefix(w.text, "--split-string="), true
		case strings.HasPrefix(w.text, "-S") && len(w.text) > 2:
			return w.text[2:], true
		case !strings.HasPrefix(w.text, "-"):
			return "", false
		}
	}
	return "", false
}

// selfPiping reports whether a function's body runs itself in a pipeline or in the
// background: the shape of a fork bomb.
func selfPiping(f *syntax.FuncDecl, name string) bool {
	if name == "" {
		return false
	}
	found := false
	syntax.Walk(f.Body, func(n syntax.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *syntax.BinaryCmd:
			if (x.Op == syntax.Pipe || x.Op == syntax.PipeAll) && callsName(x.X, name) && callsName(x.Y, name) {
				found = true
			}
		case *syntax.Stmt:
			if x.Background && callsName(x, name) {
				if b, ok := x.Cmd.(*syntax.BinaryCmd); ok && (callsName(b.X, name) || callsName(b.Y, name)) {
					found = true
				}
			}
		}
		return true
	})
	return found
}

func callsName(n syntax.Node, name string) bool {
	found := false
	syntax.Walk(n, func(x syntax.Node) bool {
		if ce, ok := x.(*syntax.CallExpr); ok && len(ce.Args) > 0 && ce.Args[0].Lit() == name {
			found = true
		}
		return !found
	})
	return found
}

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
