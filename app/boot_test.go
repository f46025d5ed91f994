package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"talaria/backend"
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
	if _, err := svc.Store.RenameSession(ctx, sess.ID, evil); err != nil {
		t.Fatal(err)
	}
	a := &App{svc: svc}
	files := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/assets/app.js" {
			_, _ = io.WriteString(w, "console.log(1)")
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
		Sessions []store.Session `json:"sessions"`
		Limit    int             `json:"limit"`
	}
	if err := json.Unmarshal([]byte(m[1]), &boot); err != nil {
		t.Fatal(err)
	}
	want, _ := svc.ListSessionsPage(ctx, 0, BootSessionPage)
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
