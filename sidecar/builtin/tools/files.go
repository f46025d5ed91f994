package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Limits of the file tools.
const (
	DefaultReadLines = 2000      // read_file's default line count
	MaxReadLines     = 20000     // read_file's largest limit
	MaxReadBytes     = 128 << 10 // read_file returns at most this much text
	MaxWriteBytes    = 16 << 20  // write_file and patch refuse larger contents
	DefaultListCap   = 500       // list_files' default entry cap
	MaxListCap       = 5000
	DefaultMatchCap  = 100 // search_files' default match cap
	MaxMatchCap      = 1000
	maxSearchFile    = 4 << 20 // search_files skips larger files
	maxMatchText     = 300     // bytes of a matching line shown
	binarySniff      = 8 << 10
)

// skipDirs are not descended into by list_files (recursive) and search_files.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".hg": true, ".svn": true}

// ReadResult is the result of read_file. Lines are numbered from 1; Content holds lines
// StartLine to EndLine (EndLine 0 when the file is empty or the offset is past its end).
type ReadResult struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated,omitempty"`
}

// ReadFile reads lines offset.. (1-based; 0 means 1) of a file, at most limit lines (0
// means DefaultReadLines) and MaxReadBytes bytes. Errors: a path outside the workspace,
// a missing file, a directory, a binary file.
func (w *Workspace) ReadFile(p string, offset, limit int) (ReadResult, error) {
	rel, err := w.Rel(p)
	if err != nil {
		return ReadResult{}, err
	}
	f, st, err := w.openFile(rel)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	if st.IsDir() {
		return ReadResult{}, fmt.Errorf("%s is a directory: use list_files", Display(rel))
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(binarySniff); bytes.IndexByte(head, 0) >= 0 {
		return ReadResult{}, fmt.Errorf("%s is a binary file (%d bytes); it is not shown", Display(rel), st.Size())
	}
	if offset <= 0 {
		offset = 1
	}
	if limit <= 0 {
		limit = DefaultReadLines
	}
	limit = min(limit, MaxReadLines)
	res := ReadResult{Path: Display(rel), StartLine: offset}
	var sb strings.Builder
	n := 0
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			n++
			if n >= offset && n < offset+limit && !res.Truncated {
				if sb.Len()+len(line) > MaxReadBytes {
					res.Truncated = true
				} else {
					sb.WriteString(line)
					res.EndLine = n
				}
			} else if n >= offset+limit {
				res.Truncated = true
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return ReadResult{}, friendly(rel, err)
			}
			break
		}
	}
	res.TotalLines = n
	res.Content = valid(sb.String())
	if res.EndLine == 0 {
		res.StartLine = 0
	}
	return res, nil
}

// WriteResult is the result of write_file and patch. Diff is the unified diff of the
// change (whole); FilesModified lists the file written.
type WriteResult struct {
	Path          string   `json:"path"`
	Created       bool     `json:"created,omitempty"`
	BytesWritten  int      `json:"bytes_written"`
	Replacements  int      `json:"replacements,omitempty"`
	Diff          string   `json:"diff"`
	FilesModified []string `json:"files_modified"`
}

// WriteFile writes content to a file, creating it and its parent directories when
// needed (an existing file keeps its permissions). Errors: a path outside the
// workspace, a directory at the path, content over MaxWriteBytes, the file system's.
func (w *Workspace) WriteFile(p, content string) (WriteResult, error) {
	rel, err := w.Rel(p)
	if err != nil {
		return WriteResult{}, err
	}
	if rel == "." {
		return WriteResult{}, errors.New("the path names the workspace folder itself; give a file path")
	}
	if len(content) > MaxWriteBytes {
		return WriteResult{}, fmt.Errorf("the content is %d bytes; the limit is %d", len(content), MaxWriteBytes)
	}
	old, mode, exists, err := w.current(rel)
	if err != nil {
		return WriteResult{}, err
	}
	if dir := filepath.Dir(rel); dir != "." {
		if _, err := do(w, dir, func(d string) (struct{}, error) { return struct{}{}, w.root.MkdirAll(d, 0o755) }); err != nil {
			return WriteResult{}, friendly(dir, err)
		}
	}
	if err := w.write(rel, content, mode); err != nil {
		return WriteResult{}, err
	}
	res := WriteResult{Path: Display(rel), Created: !exists, BytesWritten: len(content), FilesModified: []string{Display(rel)}}
	oldName := Display(rel)
	if !exists {
		oldName = ""
	}
	res.Diff = Unified(oldName, Display(rel), old, content)
	return res, nil
}

// Patch replaces oldString with newString in a file: exactly one occurrence, or every
// one with replaceAll. Errors: a path outside the workspace, a missing file, an empty
// oldString, oldString not found or found more than once without replaceAll, no change.
func (w *Workspace) Patch(p, oldString, newString string, replaceAll bool) (WriteResult, error) {
	rel, err := w.Rel(p)
	if err != nil {
		return WriteResult{}, err
	}
	if oldString == "" {
		return WriteResult{}, errors.New("old_string is empty: give the exact text to replace (use write_file to create a file)")
	}
	if oldString == newString {
		return WriteResult{}, errors.New("old_string and new_string are the same: nothing to change")
	}
	old, mode, exists, err := w.current(rel)
	if err != nil {
		return WriteResult{}, err
	}
	if !exists {
		return WriteResult{}, fmt.Errorf("%s does not exist (use write_file to create it)", Display(rel))
	}
	n := strings.Count(old, oldString)
	switch {
	case n == 0:
		return WriteResult{}, fmt.Errorf("old_string was not found in %s: it must match the file exactly, white space and indentation included (read_file shows the current text)", Display(rel))
	case n > 1 && !replaceAll:
		return WriteResult{}, fmt.Errorf("old_string occurs %d times in %s: include more of the surrounding lines to make it unique, or set replace_all", n, Display(rel))
	}
	count, replaced := 1, 1
	if replaceAll {
		count, replaced = -1, n
	}
	content := strings.Replace(old, oldString, newString, count)
	if len(content) > MaxWriteBytes {
		return WriteResult{}, fmt.Errorf("the patched file would be %d bytes; the limit is %d", len(content), MaxWriteBytes)
	}
	if err := w.write(rel, content, mode); err != nil {
		return WriteResult{}, err
	}
	return WriteResult{
		Path: Display(rel), BytesWritten: len(content), Replacements: replaced,
		Diff: Unified(Display(rel), Display(rel), old, content), FilesModified: []string{Display(rel)},
	}, nil
}

// current returns a file's content and permissions, and whether it exists.
func (w *Workspace) current(rel string) (content string, mode fs.FileMode, exists bool, err error) {
	f, st, err := w.openFile(rel)
	if errors.Is(err, fs.ErrNotExist) || err != nil && strings.HasSuffix(err.Error(), " does not exist") {
		return "", 0o644, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	defer f.Close()
	if st.IsDir() {
		return "", 0, false, fmt.Errorf("%s is a directory", Display(rel))
	}
	if st.Size() > MaxWriteBytes {
		return "", 0, false, fmt.Errorf("%s is %d bytes; files over %d bytes are not edited", Display(rel), st.Size(), MaxWriteBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxWriteBytes+1))
	if err != nil {
		return "", 0, false, friendly(rel, err)
	}
	return string(b), st.Mode().Perm(), true, nil
}

// ListResult is the result of list_files: paths relative to the workspace, slash
// separated, directories ending in "/".
type ListResult struct {
	Path      string   `json:"path"`
	Entries   []string `json:"entries"`
	Truncated bool     `json:"truncated,omitempty"`
}

// ListFiles lists a directory (recursively when asked; .git and node_modules are listed
// but not entered), sorted, at most limit entries (0 means DefaultListCap).
func (w *Workspace) ListFiles(ctx context.Context, p string, recursive bool, limit int) (ListResult, error) {
	if p == "" {
		p = "."
	}
	rel, err := w.Rel(p)
	if err != nil {
		return ListResult{}, err
	}
	if limit <= 0 {
		limit = DefaultListCap
	}
	limit = min(limit, MaxListCap)
	rel, err = w.dirPath(rel)
	if err != nil {
		return ListResult{}, err
	}
	res := ListResult{Path: Display(rel), Entries: []string{}}
	err = w.walk(ctx, rel, func(name string, d fs.DirEntry) error {
		if len(res.Entries) >= limit {
			res.Truncated = true
			return fs.SkipAll
		}
		entry := name
		if d.IsDir() {
			entry += "/"
		}
		res.Entries = append(res.Entries, entry)
		if d.IsDir() && (!recursive || skipDirs[d.Name()]) {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return ListResult{}, err
	}
	return res, nil
}

// dirPath checks rel is a directory (following a symlink that stays inside) and
// returns the path to walk.
func (w *Workspace) dirPath(rel string) (string, error) {
	f, st, err := w.openFile(rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", Display(rel))
	}
	if real, ok := fdPath(f); ok {
		if r, err := filepath.Rel(w.real, real); err == nil && (r == "." || filepath.IsLocal(r)) {
			return r, nil
		}
	}
	if r, ok := w.resolve(rel, w.statErr(rel)); ok {
		return r, nil
	}
	return rel, nil
}

func (w *Workspace) statErr(rel string) error {
	_, err := w.root.Stat(rel)
	return err
}

// Match is one matching line of search_files.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// SearchResult is the result of search_files.
type SearchResult struct {
	Pattern       string  `json:"pattern"`
	Literal       bool    `json:"literal,omitempty"`
	Note          string  `json:"note,omitempty"`
	Matches       []Match `json:"matches"`
	Truncated     bool    `json:"truncated,omitempty"`
	FilesSearched int     `json:"files_searched"`
	// Skipped counts files left out because they are special (FIFOs, devices) or have
	// more than one hard link.
	Skipped int `json:"skipped,omitempty"`
}

// SearchFiles finds lines matching pattern (a regular expression in Go's RE2 syntax, or
// literal text when literal is set or the pattern does not compile) in the files under
// p (a directory or one file), optionally only files whose name matches glob (e.g.
// "*.go"). It skips .git and node_modules, binary files and files over 4 MiB, and stops
// after limit matches (0 means DefaultMatchCap).
func (w *Workspace) SearchFiles(ctx context.Context, pattern, p, glob string, literal, ignoreCase bool, limit int) (SearchResult, error) {
	if pattern == "" {
		return SearchResult{}, errors.New("no pattern was given")
	}
	if p == "" {
		p = "."
	}
	rel, err := w.Rel(p)
	if err != nil {
		return SearchResult{}, err
	}
	if glob != "" {
		if _, err := path.Match(glob, "x"); err != nil {
			return SearchResult{}, fmt.Errorf("the glob %q is malformed: %v", glob, err)
		}
	}
	if limit <= 0 {
		limit = DefaultMatchCap
	}
	limit = min(limit, MaxMatchCap)
	res := SearchResult{Pattern: pattern, Literal: literal, Matches: []Match{}}
	re := searchRegexp(pattern, literal, ignoreCase, &res)
	f, st, err := w.openFile(rel)
	if err != nil {
		return SearchResult{}, err
	}
	f.Close()
	if !st.IsDir() {
		start := filepath.ToSlash(rel)
		if r, ok := w.resolve(rel, w.statErr(rel)); ok {
			start = filepath.ToSlash(r)
		}
		if err := w.searchFile(start, "", re, limit, &res); err != nil && !errors.Is(err, fs.SkipAll) {
			return SearchResult{}, err
		}
		return res, nil
	}
	start, err := w.dirPath(rel)
	if err != nil {
		return SearchResult{}, err
	}
	var names []string
	err = w.walk(ctx, start, func(name string, d fs.DirEntry) error {
		if d.IsDir() {
			if skipDirs[d.Name()] {
				return fs.SkipDir
			}
			return nil
		}
		names = append(names, name)
		return nil
	})
	if err != nil {
		return SearchResult{}, err
	}
	sort.Strings(names)
	for _, name := range names {
		if ctx.Err() != nil {
			return SearchResult{}, ctx.Err()
		}
		if err := w.searchFile(name, glob, re, limit, &res); errors.Is(err, fs.SkipAll) {
			break
		}
	}
	if res.Skipped > 0 {
		res.Note = strings.TrimSpace(res.Note + fmt.Sprintf(" %d special or hard-linked files were not searched.", res.Skipped))
	}
	return res, nil
}

// searchRegexp is the expression search_files matches lines with: pattern as RE2, or
// as literal text when literal is set or it does not compile (res then says so).
func searchRegexp(pattern string, literal, ignoreCase bool, res *SearchResult) *regexp.Regexp {
	expr := pattern
	if literal {
		expr = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		res.Literal = true
		res.Note = "the pattern is not a valid regular expression (" + err.Error() + "); it was searched as literal text"
		expr = regexp.QuoteMeta(pattern)
		if ignoreCase {
			expr = "(?i)" + expr
		}
		re = regexp.MustCompile(expr)
	}
	return re
}

// searchFile adds to res the lines of the workspace file name (slash-separated) that re
// matches, unless glob ("" for any) does not match its base name; special, hard-linked,
// binary and too large files are left out. It returns fs.SkipAll once res holds limit
// matches and another is found.
func (w *Workspace) searchFile(name, glob string, re *regexp.Regexp, limit int, res *SearchResult) error {
	if glob != "" {
		if ok, _ := path.Match(glob, path.Base(name)); !ok {
			return nil
		}
	}
	f, info, err := w.openFile(filepath.FromSlash(name))
	if err != nil {
		if errors.Is(err, ErrHardLinked) || errors.Is(err, ErrNotRegular) {
			res.Skipped++
		}
		return nil
	}
	defer f.Close()
	if info.IsDir() || info.Size() > maxSearchFile {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSearchFile+1))
	if err != nil || bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
		return nil
	}
	res.FilesSearched++
	line := 0
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if re.Match(l) {
			if len(res.Matches) >= limit {
				res.Truncated = true
				return fs.SkipAll
			}
			text, _ := Cap(strings.TrimRight(string(l), "\r"), maxMatchText)
			res.Matches = append(res.Matches, Match{Path: name, Line: line, Text: valid(text)})
		}
	}
	return nil
}

// friendly rewords file-system errors for the model: the workspace-relative path, and
// what went wrong in plain words.
func friendly(rel string, err error) error {
	switch {
	case errors.Is(err, ErrOutside), errors.Is(err, ErrHidden), errors.Is(err, ErrNotRegular), errors.Is(err, ErrHardLinked):
		return err
	case isEscape(err):
		return fmt.Errorf("path %q leads %w through a symbolic link", Display(rel), ErrOutside)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", Display(rel))
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", Display(rel))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", Display(rel), pe.Err)
	}
	return err
}
