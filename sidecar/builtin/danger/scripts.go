package danger

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Scripts inside commands: what a shell runs (its -c script, its stdin, a here-document
// or here-string, the command piped into it), eval, source, find -exec, aliases, traps,
// git aliases, env -S and interpreters; downloaded or decoded data fed to them, and
// scripts only known at run time, which ask.

// innerScripts analyses the scripts a simple command c (stmt s) runs inside it: a
// shell's, eval's, a sourced file read from stdin, find -exec's command, an alias's,
// a trap's, a git alias's, an interpreter's stdin.
func (a *analysis) innerScripts(c *command, s *syntax.Stmt, e env) {
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
