package app

import (
	"errors"
	"strings"
	"testing"
)

// A window that cannot open on Windows says what to install when the WebView2 Runtime
// is missing, and only then (issue 26, item 9e).
func TestStartupErrorText(t *testing.T) {
	missing := startupErrorText(errors.New("WebView2 runtime not installed"), "")
	for _, want := range []string{"WebView2 runtime not installed", "Microsoft Edge WebView2 Runtime", WebView2Download, "start Talaria again"} {
		if !strings.Contains(missing, want) {
			t.Errorf("the text for a missing runtime lacks %q:\n%s", want, missing)
		}
	}
	other := startupErrorText(errors.New("boom"), "120.0.2210.91")
	if strings.Contains(other, WebView2Download) || !strings.Contains(other, "boom") || !strings.Contains(other, "talaria.log") {
		t.Errorf("the text with the runtime installed:\n%s", other)
	}
}
