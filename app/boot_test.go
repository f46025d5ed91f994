package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"talaria/app/tray"
	"talaria/backend"
	"talaria/backend/firstscreen"
	"talaria/backend/store"
	"talaria/backend/vault"
)

const page = `<!doctype html><html><head><title>Talaria</title></head><body><div id="app"></div></body></html>`

func serve(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// index.html comes with the sidebar's first page of sessions (the real store): a title
// that tries to end the element stays inside the JSON; other files pass through; a store
// that cannot be read leaves the page as it is.
func TestBootMiddleware(t *testing.T) {
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: t.TempDir(), Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := svc.Store.CreateSession(ctx, store.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	evil := `</script><script>alert(1)</script><!--`
	renamed, err := svc.Store.RenameSession(ctx, sess.ID, evil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Store.AppendMessages(ctx, sess.ID, renamed.Revision, []store.Message{{Role: "user", Content: "hello"},
		{Role: "assistant", Content: evil}}); err != nil {
		t.Fatal(err)
	}
	a := &App{svc: svc}
	files := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/assets/app.js" {
			_, _ = io.WriteString(w, "console.log(1)")
			return
		}
		// As Vite does: a validator, and 304 to a request that has it.
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 30 Nov 2026 10:00:00 GMT")
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, page)
	})
	h := BootMiddleware(a)(files)

	code, body := serve(t, h, "/")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	m := regexp.MustCompile(`<script type="application/json" id="talaria-boot">(.*?)</script></head>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no boot data before </head> in %s", body)
	}
	if strings.Count(body, "<script") != 1 || strings.Contains(m[1], "<") {
		t.Fatalf("the title escaped its JSON: %s", body)
	}
	var boot struct {
		Sessions   []store.Session         `json:"sessions"`
		Limit      int                     `json:"limit"`
		Transcript *backend.TranscriptPage `json:"transcript"`
	}
	if err := json.Unmarshal([]byte(m[1]), &boot); err != nil {
		t.Fatal(err)
	}
	want, _ := svc.Chats().ListSessionsPage(ctx, 0, BootSessionPage)
	if len(want) != 1 || want[0].Title != evil {
		t.Fatalf("the store lists %+v, want the one session", want)
	}
	if boot.Limit != BootSessionPage || len(boot.Sessions) != len(want) {
		t.Fatalf("boot = %d sessions (limit %d), ListSessionsPage gives %d", len(boot.Sessions), boot.Limit, len(want))
	}
	for i := range want {
		if boot.Sessions[i].ID != want[i].ID || boot.Sessions[i].Title != want[i].Title {
			t.Fatalf("boot session %d = %+v, want %+v", i, boot.Sessions[i], want[i])
		}
	}
	// The first listed chat's newest rows came with it: its page as GetTranscript gives it.
	wantPage, _ := svc.Chats().GetTranscript(ctx, want[0].ID, -1, BootTranscriptPage)
	if boot.Transcript == nil || boot.Transcript.Session.ID != want[0].ID || len(boot.Transcript.Messages) != len(wantPage.Messages) ||
		len(wantPage.Messages) != 2 || boot.Transcript.Messages[1].Content != wantPage.Messages[1].Content {
		t.Fatalf("boot transcript = %+v, want %+v", boot.Transcript, wantPage)
	}
	// A reload's conditional request still gets the page whole, with the data of now,
	// and nothing lets it be cached (wails dev's Vite server answers 304 to it).
	if _, err := svc.Store.CreateSession(ctx, store.NewSession{Title: "made since"}); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("If-None-Match", `"v1"`)
	req.Header.Set("If-Modified-Since", "Mon, 30 Nov 2026 10:00:00 GMT")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "made since") {
		t.Fatalf("a conditional request got %d: %s", rec.Code, rec.Body.String())
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" || rec.Header().Get("ETag") != "" || rec.Header().Get("Last-Modified") != "" {
		t.Fatalf("the page may be cached: %v", rec.Header())
	}
	if _, js := serve(t, h, "/assets/app.js"); js != "console.log(1)" {
		t.Fatalf("another file was changed: %q", js)
	}

	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, closed := serve(t, h, "/index.html"); closed != page {
		t.Fatalf("with the store closed the page changed: %s", closed)
	}
}

// The backend opens beside the window's creation (NewOpening): the page waits for it,
// and when it cannot be opened the window gets the error's text (escaped, no script)
// in place of the app, and Backend returns it. In a synctest bubble: once every
// goroutine of it is blocked (synctest.Wait) with the open held, the page's request
// has not been answered, so it waits for the open, whatever the machine's speed.
func TestBootPageWaitsForTheBackendAndShowsItsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		cause := errors.New(`the data folder /x<y> is held by another process; close it & start Talaria again`)
		a := NewOpening(func() (*backend.Service, error) {
			<-release
			return nil, cause
		}, nil)
		files := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, page) })
		h := BootMiddleware(a)(files)
		type answer struct {
			code int
			body string
		}
		got := make(chan answer, 1)
		go func() {
			code, body := serve(t, h, "/")
			got <- answer{code, body}
		}()
		synctest.Wait()
		select {
		case ans := <-got:
			t.Fatalf("the page was served before the backend was open: %d %s", ans.code, ans.body)
		default:
		}
		close(release)
		ans := <-got
		if ans.code != http.StatusOK || !strings.Contains(ans.body, "Talaria cannot open its data") ||
			!strings.Contains(ans.body, "/x&lt;y&gt; is held by another process; close it &amp; start Talaria again") {
			t.Fatalf("the error page: %d %s", ans.code, ans.body)
		}
		if strings.Contains(ans.body, "<script") || strings.Contains(ans.body, `id="app"`) {
			t.Fatalf("the error page runs script or holds the app: %s", ans.body)
		}
		if svc, err := Backend(a); svc != nil || !errors.Is(err, cause) {
			t.Fatalf("Backend = %v, %v", svc, err)
		}
		// The hooks do nothing on a backend that is not there (no nil dereference).
		a.domReady(context.Background())
		if a.beforeClose(context.Background()) {
			t.Fatal("closing the error window was refused")
		}
		a.shutdown(context.Background())
	})
}

// A backend that opens is the one every hook and the page then use.
func TestNewOpeningGivesTheOpenedBackend(t *testing.T) {
	svc := openTestService(t)
	a := NewOpening(func() (*backend.Service, error) { return svc, nil }, nil)
	if got, err := Backend(a); err != nil || got != svc {
		t.Fatalf("Backend = %v, %v", got, err)
	}
	code, body := serve(t, BootMiddleware(a)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, page) })), "/")
	if code != http.StatusOK || !strings.Contains(body, `id="talaria-boot"`) {
		t.Fatalf("the page: %d %s", code, body)
	}
}

// The page names the family fontconfig gives system-ui (NewOpening looks it up) in a
// <style> after the bundle's stylesheet, before the boot data; a hostile family name is
// escaped; a lookup that has not answered in time leaves the page without it; the style
// comes even when the sessions cannot be read.
func TestBootPageNamesTheSystemUIFont(t *testing.T) {
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: t.TempDir(), Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	files := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, page) })
	withFont := func(family string, known bool) *App {
		a := &App{svc: svc, uiFont: family, uiFontReady: make(chan struct{})}
		if known {
			close(a.uiFontReady)
		}
		return a
	}

	_, body := serve(t, BootMiddleware(withFont("DejaVu Sans", true))(files), "/")
	want := `<style id="talaria-font">:root{--font:"DejaVu Sans",system-ui,sans-serif;--mono:monospace}</style><script type="application/json" id="talaria-boot">`
	if !strings.Contains(body, want) || !strings.HasSuffix(strings.SplitN(body, "</head>", 2)[0], "</script>") {
		t.Fatalf("the page does not name the font before its data: %s", body)
	}

	_, body = serve(t, BootMiddleware(withFont(`x"}</style><script>alert(1)</script>`, true))(files), "/")
	if strings.Count(body, "</style>") != 1 || strings.Count(body, "<script") != 1 || !strings.Contains(body, `--font:"x\22 \7d \3c \2f style\3e`) {
		t.Fatalf("a hostile family name got out of its string: %s", body)
	}

	// A lookup that never answers, in a synctest bubble: its clock moves only when
	// everything in it waits, so the page waits uiFontWait exactly.
	monoOnly := `<style id="talaria-font">:root{--mono:monospace}</style>`
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, body := serve(t, BootMiddleware(withFont("Late", false))(files), "/")
		if strings.Contains(body, "--font:") || !strings.Contains(body, monoOnly) || !strings.Contains(body, `id="talaria-boot"`) {
			t.Fatalf("a lookup that never answered: %s", body)
		}
		if d := time.Since(start); d != uiFontWait {
			t.Fatalf("the page waited %v for the font, want %v", d, uiFontWait)
		}
	})

	for _, empty := range []string{"", "bad\nname"} {
		if _, body = serve(t, BootMiddleware(withFont(empty, true))(files), "/"); strings.Contains(body, "--font:") || !strings.Contains(body, monoOnly) {
			t.Fatalf("family %q: %s", empty, body)
		}
	}

	if err := svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, body = serve(t, BootMiddleware(withFont("DejaVu Sans", true))(files), "/")
	if !strings.Contains(body, `<style id="talaria-font">`) || strings.Contains(body, "talaria-boot") {
		t.Fatalf("with the store closed: %s", body)
	}
}

// A window closed (or a SIGTERM's quit) while the backend is still opening quits once
// the open is over; it does not hide to the tray, even with a tray and a tray host
// (hiding would need the window, and Wails' runtime fails without one). In a synctest
// bubble: the close is in flight (every goroutine blocked, synctest.Wait) before the
// open is let go, and not answered before.
func TestCloseWhileOpeningQuits(t *testing.T) {
	svc := openTestService(t)
	old := hostAvailable
	defer func() { hostAvailable = old }()
	hostAvailable = func() bool { return true }
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		a := NewOpening(func() (*backend.Service, error) {
			<-release
			return svc, nil
		}, nil)
		AttachTray(a, &tray.Tray{})
		done := make(chan bool, 1)
		go func() { done <- a.beforeClose(context.Background()) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("the close was answered before the backend was open")
		default:
		}
		close(release)
		if prevent := <-done; prevent || !a.life.quitRequested() {
			t.Fatalf("close during the open: prevent=%v quitting=%v", prevent, a.life.quitRequested())
		}
	})
}

// The first-screen picture: kept only for the chat the next page opens first, served
// (sanitised, inert, before the app's element, with its scroll script) while the data
// are those it was taken of, and no longer once they change (the real store).
func TestBootPageFirstScreen(t *testing.T) {
	svc := openTestService(t)
	ctx := context.Background()
	older, err := svc.Store.CreateSession(ctx, store.NewSession{Title: "older"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := svc.Store.CreateSession(ctx, store.NewSession{Title: "newest"})
	if err != nil {
		t.Fatal(err)
	}
	a := &App{svc: svc}
	h := BootMiddleware(a)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, page)
	}))
	shot := `<div class="shell"><p>the last chat</p><img src="x" onerror="alert(1)"><script>alert(2)</script></div>`

	// A picture of a chat the next start does not open first is not kept.
	if err := a.saveFirstScreen(older.ID, 1180, shot); err != nil {
		t.Fatal(err)
	}
	if _, body := serve(t, h, "/"); strings.Contains(body, "talaria-first-screen") {
		t.Fatalf("a picture of another chat was served: %s", body)
	}
	if err := a.saveFirstScreen(sess.ID, 1180, shot); err != nil {
		t.Fatal(err)
	}
	_, body := serve(t, h, "/")
	m := regexp.MustCompile(`<div id="talaria-first-screen" aria-hidden="true" inert data-width="1180" style="[^"]*">(.*?)</div><script src="/first-screen.js"( data-app="[^"]*")?></script><div id="app">`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no picture before the app's element: %s", body)
	}
	if !strings.Contains(m[1], "<p>the last chat</p>") || strings.Contains(m[1], "onerror") || strings.Contains(m[1], "<script") {
		t.Fatalf("the picture served = %q; want it sanitised, its text kept", m[1])
	}
	// The data change (a new row in the chat): the picture is of other data now.
	cur, err := svc.Store.GetSession(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Store.AppendMessages(ctx, sess.ID, cur.Revision, []store.Message{{Role: "user", Content: "since"}}); err != nil {
		t.Fatal(err)
	}
	if _, body := serve(t, h, "/"); strings.Contains(body, "talaria-first-screen") || !strings.Contains(body, `<div id="app">`) {
		t.Fatalf("a picture of older data was served: %s", body)
	}
}

// The picture's page starts the app's module from first-screen.js, after the picture's
// frame: the module is taken out of the head and handed to it (data-app).
func TestInjectFirstScreenHandsOverTheModule(t *testing.T) {
	page := []byte(`<head><script type="module" crossorigin src="./assets/index-CP8whYbx.js"></script>
<link rel="stylesheet" crossorigin href="./assets/index-LbV54Dhy.css"></head><body><div id="app"></div></body>`)
	got := string(injectFirstScreen(page, []byte("<p>x</p>"), 1180))
	if strings.Contains(got, `type="module"`) || !strings.Contains(got, `<link rel="modulepreload" crossorigin href="./assets/index-CP8whYbx.js">`) {
		t.Fatalf("the module is still in the page: %s", got)
	}
	if !strings.Contains(got, `<p>x</p></div><script src="/first-screen.js" data-app="./assets/index-CP8whYbx.js"></script><div id="app">`) || !strings.Contains(got, `<link rel="stylesheet" crossorigin href="./assets/index-LbV54Dhy.css">`) {
		t.Fatalf("page = %s", got)
	}
	// Without a picture the page keeps its module.
	if got := string(injectHead(page, "", nil)); !strings.Contains(got, `type="module"`) {
		t.Fatalf("page without a picture = %s", got)
	}
}

// TestBootPageBakedFirstScreen: a data folder's first start is served the picture of a
// fresh folder's first screen taken when the binary was built (app/baked), sanitised,
// in the built page only, and not once the folder has a chat (its data differ).
func TestBootPageBakedFirstScreen(t *testing.T) {
	svc := openTestService(t)
	a := &App{svc: svc}
	data, first := a.bootData()
	if data == nil || first != "" {
		t.Fatalf("a fresh folder's boot data = %s, first %q", data, first)
	}
	// The picture a build takes: the window's save of the empty chat, in the file format.
	if err := a.saveFirstScreen("", 1180, `<div class="shell"><h2>What can I help with?</h2><img src="x" onerror="alert(1)"></div>`); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(svc.Paths.DataDir, firstscreen.FileName))
	if err != nil {
		t.Fatalf("the empty chat's picture was not kept: %v", err)
	}
	a.firstScreen().Forget()
	old := bakedFirstScreen
	defer func() { bakedFirstScreen = old }()
	bakedFirstScreen = func() []byte { return file }

	built := strings.Replace(page, `<div id="app">`, `<script type="module" crossorigin src="./assets/index-Ab1.js"></script><div id="app">`, 1)
	handler := func(p string) http.Handler {
		return BootMiddleware(a)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, p)
		}))
	}
	_, body := serve(t, handler(built), "/")
	if !strings.Contains(body, `data-width="1180"`) || !strings.Contains(body, "What can I help with?") || strings.Contains(body, "onerror") {
		t.Fatalf("the built page of a fresh folder was not served the baked picture, sanitised: %s", body)
	}
	if !strings.Contains(body, `data-app="./assets/index-Ab1.js"`) || strings.Contains(body, `<script type="module"`) {
		t.Fatalf("the app's module was not handed to first-screen.js: %s", body)
	}
	// Vite's own page (wails dev) is not the page the picture was taken of.
	if _, body := serve(t, handler(page), "/"); strings.Contains(body, "talaria-first-screen") {
		t.Fatalf("a page other than the built one was served the baked picture: %s", body)
	}
	// A chat: the data are not a fresh folder's any more.
	if _, err := svc.Store.CreateSession(context.Background(), store.NewSession{Title: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, body := serve(t, handler(built), "/"); strings.Contains(body, "talaria-first-screen") {
		t.Fatalf("a folder with a chat was served the fresh folder's picture: %s", body)
	}
}

// openTestService opens a backend on a new data folder with an in-memory keyring, closed
// when the test ends.
func openTestService(t *testing.T) *backend.Service {
	t.Helper()
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: t.TempDir(), Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(context.Background()) })
	return svc
}
