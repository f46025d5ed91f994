package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	goruntime "runtime"
	"time"

	"github.com/wailsapp/wails/v2/pkg/options/assetserver"

	"talaria/app/uifont"
	"talaria/backend/firstscreen"
)

// BootSessionPage is how many sessions the page is given in index.html: the sidebar's
// first page (frontend/src/lib/transcript.ts SESSION_PAGE).
const BootSessionPage = 100

// BootTranscriptPage is how many of the first listed chat's newest rows the page is
// given: the chat's first screen (frontend/src/lib/transcript.ts FIRST_PAGE).
const BootTranscriptPage = 40

// bootMarker is where the page's data goes: just before </head>.
var bootMarker = []byte("</head>")

// BootMiddleware serves index.html with the sidebar's first page of sessions in it, as
// `<script type="application/json" id="talaria-boot">{"sessions":[...],"limit":100,"transcript":{...}}</script>`
// (the shape ListSessionsPage returns, and GetTranscript's page of the first listed
// chat's newest BootTranscriptPage rows), so the window draws its sidebar in the pass
// that mounts the app, and the chat it opens first, without waiting for a bound call's
// round trip (issues 16 and 24). The JSON is
// data, never run (CSP script-src 'self' would refuse it anyway), and encoding/json
// escapes <, > and & so nothing in a title can end the element. When the sessions
// cannot be read (a locked or damaged database) the page is served as it is and the
// window asks for them itself, and shows the error then. The page is never cached nor
// answered 304 (its data would be stale). Before the data, the page gets the family
// `system-ui` stands for on this desktop, by name (uiFontStyle). Other requests pass
// through.
func BootMiddleware(a *App) assetserver.Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || (r.URL.Path != "/" && r.URL.Path != "/index.html") {
				next.ServeHTTP(w, r)
				return
			}
			// The page carries data as of now: never a cached copy. A conditional
			// request would get a 304 and the browser its stale copy (wails dev's Vite
			// server answers a reload so), so the page is always asked for whole and
			// served uncacheable.
			r = r.Clone(r.Context())
			for _, h := range []string{"If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"} {
				r.Header.Del(h)
			}
			if err := a.opened(); err != nil {
				serveOpenError(w, err)
				return
			}
			rec := &pageRecorder{header: http.Header{}, code: http.StatusOK}
			next.ServeHTTP(rec, r)
			body := rec.body.Bytes()
			if rec.code == http.StatusOK {
				data, _ := a.bootData()
				body = injectHead(body, a.uiFontStyle(), data)
				if data != nil {
					key := firstscreen.Key(data)
					shot, width := a.firstScreen().Load(key)
					if shot == nil && appModule.Match(body) {
						// A data folder's first start: the picture of a fresh folder's
						// first screen taken when this binary was built, if it is of
						// this page's data (no chats yet) and the page is the built one
						// it was taken of (wails dev serves Vite's own page).
						shot, width = firstscreen.Parse(bakedFirstScreen(), key)
					}
					if shot != nil {
						body = injectFirstScreen(body, shot, width)
					}
				}
			}
			for k, v := range rec.header {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.Header().Del("ETag")
			w.Header().Del("Last-Modified")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(rec.code)
			_, _ = w.Write(body)
		})
	}
}

// serveOpenError answers the window's page with why the backend could not be opened
// (a data folder held by another process, a database of a newer Talaria, a full disk...),
// in place of the app: the error's own text says what to do. The page is static, runs
// no script and is never cached.
func serveOpenError(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Talaria</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:48px;max-width:640px;color:#1c1917;background:#fafaf9}
h1{font-size:18px;margin:0 0 12px}p{margin:0 0 12px}.err{white-space:pre-wrap;overflow-wrap:anywhere}
@media (prefers-color-scheme:dark){body{color:#e7e5e4;background:#1c1917}}</style></head><body>
<h1>Talaria cannot open its data</h1><p class="err">`+html.EscapeString(err.Error())+`</p>
<p>Close this window, do what the message says, then start Talaria again.</p></body></html>`)
}

// bootData is the page's data and the id of the chat it opens first (the first listed;
// "" for none), or nil when the sessions cannot be read within 2 s. The first listed
// chat's rows are left out when they cannot be read (the window asks for them itself
// then).
func (a *App) bootData() ([]byte, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	svc := a.service()
	sessions, err := svc.Chats().ListSessionsPage(ctx, 0, BootSessionPage)
	if err != nil {
		return nil, ""
	}
	boot := map[string]any{"sessions": sessions, "limit": BootSessionPage}
	first := ""
	if len(sessions) > 0 {
		first = sessions[0].ID
		if page, err := svc.Chats().GetTranscript(ctx, first, -1, BootTranscriptPage); err == nil {
			boot["transcript"] = page
		}
	}
	data, err := json.Marshal(boot)
	if err != nil {
		return nil, ""
	}
	return data, first
}

// firstScreen is the store of the window's first-screen picture, in the data folder.
func (a *App) firstScreen() *firstscreen.Store {
	a.firstScreenOnce.Do(func() { a.firstScreenStore = firstscreen.New(a.service().Paths.DataDir) })
	return a.firstScreenStore
}

// firstScreenMarker is where the picture goes: before the app's element.
var firstScreenMarker = []byte(`<div id="app">`)

// injectFirstScreen puts shot (sanitised HTML of the window's #app, taken at width CSS
// pixels) before page's app element, in an inert element over the whole window, and
// after it the script that scrolls its chat to the end (frontend/public/first-screen.js;
// it takes the picture away when the window's width differs). The app's module script
// is handed to that script (data-app), which starts it once the picture's frame is
// painted; the head only preloads it. Left in the page, it ran before WebKit painted a
// picture with little text (a fresh start's), and the picture came with the app. The
// app removes the element once it has drawn its own first chat
// (frontend/src/lib/firstscreen.ts). A page without the app element is returned as it
// is.
func injectFirstScreen(page, shot []byte, width int) []byte {
	i := bytes.Index(page, firstScreenMarker)
	if i < 0 {
		return page
	}
	head := page[:i]
	app := ""
	if m := appModule.FindSubmatchIndex(head); m != nil {
		app = string(head[m[2]:m[3]])
		// Fetched (and compiled) meanwhile, run by first-screen.js.
		pre := fmt.Sprintf(`<link rel="modulepreload" crossorigin href="%s">`, app)
		head = append(append(append([]byte{}, head[:m[0]]...), pre...), head[m[1]:]...)
	}
	var out bytes.Buffer
	out.Grow(len(page) + len(shot) + 256)
	out.Write(head)
	fmt.Fprintf(&out, `<div id="talaria-first-screen" aria-hidden="true" inert data-width="%d" style="position:fixed;inset:0;z-index:2147483647;overflow:hidden;background-color:var(--bg)">`, width)
	out.Write(shot)
	if app != "" {
		fmt.Fprintf(&out, `</div><script src="/first-screen.js" data-app="%s"></script>`, app)
	} else {
		out.WriteString(`</div><script src="/first-screen.js"></script>`)
	}
	out.Write(page[i:])
	return out.Bytes()
}

// appModule is the app's module script in the built index.html (Vite's).
var appModule = regexp.MustCompile(`<script type="module" crossorigin src="(\./assets/[A-Za-z0-9_.-]+\.js)"></script>`)

// saveFirstScreen keeps page, the inner HTML of the window's #app taken at width CSS
// pixels while it showed chat sessionID at its end (sessionID "": the empty chat of a
// data folder without chats), as the picture the next start paints first
// (backend/firstscreen). It is kept only when sessionID is the chat the next page opens
// first ("" when it has none), under the key of that page's data now; otherwise the
// picture kept before is dropped. Errors: the data folder's, or firstscreen.ErrTooLarge.
func (a *App) saveFirstScreen(sessionID string, width int, page string) error {
	data, first := a.bootData()
	if data == nil || first != sessionID || width <= 0 {
		a.firstScreen().Forget()
		return nil
	}
	return a.firstScreen().Save(firstscreen.Key(data), width, []byte(page))
}

// injectHead puts style (a <style> element, or "") and data (the page's data, as an
// application/json script; nil: none) before page's </head>; a page without one is
// returned as it is.
func injectHead(page []byte, style string, data []byte) []byte {
	i := bytes.Index(page, bootMarker)
	if i < 0 || (style == "" && data == nil) {
		return page
	}
	var out bytes.Buffer
	out.Grow(len(page) + len(style) + len(data) + 64)
	out.Write(page[:i])
	out.WriteString(style)
	if data != nil {
		out.WriteString(`<script type="application/json" id="talaria-boot">`)
		out.Write(data)
		out.WriteString("</script>")
	}
	out.Write(page[i:])
	return out.Bytes()
}

// uiFontWait is how long the boot page waits for fontconfig's answer (NewOpening asks
// at launch, a few hundred ms before the page is requested).
const uiFontWait = 150 * time.Millisecond

// uiFontStyle is a <style> element that puts the family fontconfig matches `system-ui`
// to first in the page's --font (frontend/src/app.css). The font is the one `system-ui`
// gives; WebKit finds it by name at once, where `system-ui` costs a failed lookup per
// font size and weight on a desktop without fontconfig's system-ui fonts (app/uifont).
// On Linux it also drops ui-monospace from --mono, with or without that family (not
// known within uiFontWait, or none): WebKitGTK knows no such family and looks it up in
// vain for every size before it takes monospace. It is "" elsewhere and for an App made
// by New. The element comes after the bundle's stylesheet, so it wins.
func (a *App) uiFontStyle() string {
	if a.uiFontReady == nil {
		return ""
	}
	family := ""
	select {
	case <-a.uiFontReady:
		family = uifont.CSSFamily(a.uiFont)
	case <-time.After(uiFontWait):
	}
	if family == "" {
		if goruntime.GOOS != "linux" {
			return ""
		}
		return `<style id="talaria-font">:root{--mono:monospace}</style>`
	}
	return `<style id="talaria-font">:root{--font:` + family + `,system-ui,sans-serif;--mono:monospace}</style>`
}

// pageRecorder keeps what the asset handler writes for index.html.
type pageRecorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (p *pageRecorder) Header() http.Header         { return p.header }
func (p *pageRecorder) WriteHeader(code int)        { p.code = code }
func (p *pageRecorder) Write(b []byte) (int, error) { return p.body.Write(b) }
