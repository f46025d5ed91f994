package hotkey

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for text, want := range map[string]string{
		"Ctrl+Alt+Space": "Ctrl+Alt+Space",
		"ctrl + alt + a": "Ctrl+Alt+A",
		"Super+Shift+K":  "Shift+Super+K",
		"Control+F12":    "Ctrl+F12",
		"Alt+Enter":      "Alt+Return",
		"Meta+7":         "Super+7",
	} {
		s, err := Parse(text)
		if err != nil || s.String() != want {
			t.Errorf("Parse(%q) = %v, %v; want %s", text, s, err, want)
		}
	}
	for _, bad := range []string{"", "Space", "Shift+A", "Ctrl+", "Ctrl+Alt", "Hyper+A", "Ctrl+F99", "Ctrl+a-b"} {
		var pe *ParseError
		if _, err := Parse(bad); !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, want a *ParseError", bad, err)
		}
	}
}
