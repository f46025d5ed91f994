// Package firstscreen keeps a picture of the window's first screen, in HTML, so the next
// start can paint it before the app's script has run (issue 24: the first chat painted).
//
// The window sends what it shows (the sidebar and the chat it opens first, at its end)
// once it has been quiet for a moment; the host keeps it beside a key, the hash of the
// data the next page will be served with (app/boot.go bootData: the sidebar's first page
// and the first chat's newest rows). A start whose data hash to the same key is given
// the picture in its page, inert, and the app takes it away once its own first chat is
// drawn; a start whose data differ gets none. The picture is the window's own DOM, made
// of model and tool output the window had sanitised, and it is sanitised again here
// (bluemonday, an allowlist of elements and attributes with no script, frame, form,
// event handler or script URL) before it is written and when it is read back, so a
// changed file cannot put anything into the page that runs.
package firstscreen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// FileName is the picture's file in the data folder.
const FileName = "first-screen.html"

// MaxBytes is the largest picture kept (bytes of HTML, before sanitising). A first
// screen is a sidebar page and a screenful of rows: tens of KB; a bigger one is not
// worth its parse at start-up.
const MaxBytes = 2 << 20

// ErrTooLarge is returned by Save for a picture over MaxBytes, before or after
// sanitising, or one too deeply nested to be parsed.
var ErrTooLarge = errors.New("the first screen is too large to keep")

// Store keeps one picture in a folder. Its methods are safe for concurrent use.
type Store struct {
	path string
	mu   sync.Mutex
}

// New returns the Store of the data folder dir (the file is FileName in it).
func New(dir string) *Store { return &Store{path: filepath.Join(dir, FileName)} }

// Key is the key of the page data data: hex SHA-256 (64 characters).
func Key(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// header starts the file: the key and the window's width in CSS pixels it was taken
// at, one line, then the HTML.
const header = "talaria-first-screen v1 "

// Save keeps page (the inner HTML of the window's #app) as the picture of the data of
// key, taken at width CSS pixels, in place of the one kept before: sanitised, written
// to a temporary file and renamed over the old one (mode 0600). It returns ErrTooLarge
// for a page over MaxBytes and the file system's error otherwise; on error the old
// picture is removed (a picture is never shown for data it was not taken of).
func (s *Store) Save(key string, width int, page []byte) error {
	if len(page) > MaxBytes {
		s.Forget()
		return ErrTooLarge
	}
	clean := Sanitize(page)
	if len(clean) > MaxBytes || (len(clean) == 0 && len(page) > 0) {
		s.Forget()
		return ErrTooLarge
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s%s %d\n", header, key, width)
	buf.Write(clean)
	s.mu.Lock()
	defer s.mu.Unlock()
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		_ = os.Remove(tmp)
		_ = os.Remove(s.path)
		return fmt.Errorf("keep the first screen: %w", err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		_ = os.Remove(tmp)
		_ = os.Remove(s.path)
		return fmt.Errorf("keep the first screen: %w", err)
	}
	return nil
}

// Load returns the picture kept for key, sanitised, and the width it was taken at; nil
// when there is none, it was taken of other data (the file is then removed: it may
// hold a chat deleted since), or it cannot be read.
func (s *Store) Load(key string) (page []byte, width int) {
	s.mu.Lock()
	b, err := os.ReadFile(s.path)
	s.mu.Unlock()
	if err != nil {
		return nil, 0
	}
	page, width, other := parse(b, key)
	if other {
		// A picture of other data (a chat since deleted among them) is not kept.
		s.Forget()
	}
	return page, width
}

// Parse returns the picture in b (a picture file's bytes, as Save writes them: the
// header line, then the HTML) sanitised, and the width it was taken at, when it was
// taken of the data of key; nil and 0 otherwise (no picture, a damaged one, one over
// MaxBytes, or one of other data). The host uses it for the picture of a fresh data
// folder's first screen taken when the binary was built (scripts/bake-first-screen.sh).
func Parse(b []byte, key string) (page []byte, width int) {
	page, width, _ = parse(b, key)
	return page, width
}

// parse is Parse; other reports a well-formed picture of data other than key's.
func parse(b []byte, key string) (page []byte, width int, other bool) {
	if len(b) == 0 || len(b) > MaxBytes+256 {
		return nil, 0, false
	}
	line, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok || !bytes.HasPrefix(line, []byte(header)) {
		return nil, 0, false
	}
	var k string
	if n, err := fmt.Sscanf(string(line[len(header):]), "%s %d", &k, &width); err != nil || n != 2 || k != key || width <= 0 {
		return nil, 0, true
	}
	return Sanitize(rest), width, false
}

// Forget removes the picture (a missing one is not an error).
func (s *Store) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = os.Remove(s.path)
}

var (
	policyOnce sync.Once
	policy     *bluemonday.Policy
)

// Sanitize returns page with only what a still picture of the window needs: the HTML
// elements of the app and of rendered Markdown, the SVG of its icons, class, style,
// role and aria-* attributes, and links and images with relative, http(s),
// mailto or data:image URLs. Scripts, styles' and templates' content, frames, objects,
// forms, event handlers and every other URL scheme are dropped.
//
// The result is also balanced: it is parsed as the content of a <div> (the HTML
// parsing algorithm, golang.org/x/net/html) and written out again, so no end tag in it
// can close the element the host puts it in, and nothing after it (the app's own
// element) can end up inside that element.
func Sanitize(page []byte) []byte {
	policyOnce.Do(func() { policy = newPolicy() })
	clean := policy.SanitizeBytes(page)
	nodes, err := html.ParseFragment(bytes.NewReader(clean), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return nil
	}
	var out bytes.Buffer
	for _, n := range nodes {
		if err := html.Render(&out, n); err != nil {
			return nil
		}
	}
	return out.Bytes()
}

func newPolicy() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	// A closed dialog's content is in the DOM but not on screen (an open one is never
	// in a picture: frontend/src/lib/firstscreen.ts): without its element it would be.
	p.SkipElementsContent("dialog")
	p.AllowElements(
		// the app's own
		"div", "span", "main", "aside", "nav", "header", "footer", "section", "article",
		"button", "label", "input", "textarea", "ul", "ol", "li",
		"p", "h1", "h2", "h3", "h4", "h5", "h6", "small", "strong", "b", "em", "i", "u",
		"s", "del", "ins", "mark", "sub", "sup", "kbd", "samp", "var", "abbr", "time",
		"code", "pre", "blockquote", "hr", "br", "wbr", "a", "img", "figure",
		"figcaption", "details", "summary", "dl", "dt", "dd", "table", "thead", "tbody",
		"tfoot", "tr", "th", "td", "caption", "colgroup", "col", "progress", "meter",
		"output", "fieldset", "legend",
		// icons
		"svg", "g", "path", "circle", "ellipse", "rect", "line", "polyline", "polygon",
		"title", "defs", "lineargradient", "stop", "clippath",
	)
	// No id, name, for or data-* (but the two CSS and the window read): while the picture
	// is on screen beside the app being made under it, the app's lookups by id, its
	// radio groups and the tests' selectors must find the app's elements only.
	p.AllowAttrs("class", "style", "role", "title", "lang", "dir", "hidden", "tabindex",
		"width", "height", "align", "data-level", "data-first-screen-scroll").Globally()
	p.AllowAttrs("aria-hidden", "aria-label", "aria-current", "aria-selected",
		"aria-expanded", "aria-pressed", "aria-checked", "aria-busy", "aria-live",
		"aria-level", "aria-valuenow", "aria-valuemin", "aria-valuemax", "aria-disabled",
		"aria-haspopup", "aria-orientation").Globally()
	p.AllowAttrs("type", "placeholder", "disabled", "readonly", "checked", "rows",
		"cols", "maxlength", "value", "selected", "multiple", "open",
		"colspan", "rowspan", "start", "reversed", "datetime", "max", "min", "low", "high",
		"optimum", "spellcheck", "autocomplete", "alt", "loading", "decoding").Globally()
	p.AllowAttrs("xmlns", "viewbox", "fill", "stroke", "stroke-width", "stroke-linecap",
		"stroke-linejoin", "stroke-dasharray", "stroke-dashoffset", "stroke-opacity",
		"fill-opacity", "fill-rule", "clip-rule", "clip-path", "opacity", "d", "cx", "cy",
		"r", "rx", "ry", "x", "y", "x1", "y1", "x2", "y2", "points", "transform",
		"offset", "stop-color", "stop-opacity", "gradientunits", "focusable",
		"preserveaspectratio").OnElements("svg", "g", "path", "circle", "ellipse", "rect",
		"line", "polyline", "polygon", "lineargradient", "stop", "clippath", "defs")
	// Inline styles (the virtual list's positions, a few widths) keep their layout
	// properties, with no URL, expression or escape in a value.
	p.AllowStyles("position", "top", "left", "right", "bottom", "inset", "inset-inline-start",
		"inset-inline-end", "width", "height", "min-width", "min-height", "max-width",
		"max-height", "contain", "visibility", "display", "flex", "flex-grow", "flex-shrink",
		"flex-basis", "transform", "overflow", "overflow-x", "overflow-y", "opacity",
		"pointer-events", "z-index", "margin", "margin-top", "margin-bottom", "margin-left",
		"margin-right", "padding", "padding-top", "padding-bottom", "padding-left",
		"padding-right", "gap", "white-space", "text-align", "font-size", "line-height").
		MatchingHandler(plainStyleValue).Globally()
	// No <select>: WebKitGTK parses a <textarea> in one otherwise than x/net/html and
	// the picture's markup could then leave its element. No relative URL: an image of
	// "/" would ask for the page (and its data) again.
	p.AllowAttrs("href").OnElements("a")
	p.AllowAttrs("src").OnElements("img")
	p.AllowURLSchemes("http", "https", "mailto")
	p.AllowRelativeURLs(false)
	p.AllowDataURIImages()
	return p
}

// plainStyleValue reports whether a CSS value (lower-cased by bluemonday) loads and
// runs nothing: no url(), image-set(), expression(), script URL or escape.
func plainStyleValue(v string) bool {
	for _, bad := range []string{"url", "image", "expression", "javascript", "\\", "@", "<"} {
		if strings.Contains(v, bad) {
			return false
		}
	}
	return true
}
