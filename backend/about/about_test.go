package about

import (
	"strings"
	"testing"
)

func TestLibraries(t *testing.T) {
	libs, err := Libraries()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range libs {
		if l.Name == "" || l.License == "" || strings.TrimSpace(l.Text) == "" {
			t.Errorf("incomplete entry: %+v", l)
		}
		seen[l.Ecosystem+":"+l.Name] = true
	}
	// What the app cannot run without must be there, from each ecosystem.
	for _, want := range []string{"go:github.com/wailsapp/wails/v2", "go:github.com/mattn/go-sqlite3", "c:SQLite",
		"go:Go standard library and runtime", "npm:svelte", "npm:marked", "npm:dompurify"} {
		if !seen[want] {
			t.Errorf("%s is not in the notice", want)
		}
	}
	text, err := Text("npm", "dompurify")
	if err != nil || !strings.Contains(text, "Apache") {
		t.Fatalf("dompurify text: %v %.80q", err, text)
	}
	if _, err := Text("go", "example.com/none"); err != ErrUnknownLibrary {
		t.Fatalf("unknown: %v", err)
	}
}
