package uifont

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

func TestCSSFamilyEscapesAllButPlainNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"DejaVu Sans", `"DejaVu Sans"`},
		{"  Noto Sans UI ", `"Noto Sans UI"`},
		{"M+ 1p", `"M\2b  1p"`},
		{`a"b\c`, `"a\22 b\5c c"`},
		{"x</style><script>alert(1)</script>", `"x\3c \2f style\3e \3c script\3e alert\28 1\29 \3c \2f script\3e "`},
		{"Source Han Sans 思源黑体", `"Source Han Sans \601d \6e90 \9ed1 \4f53 "`},
		{"", ""},
		{"bad\nname", ""},
		{"nul\x00", ""},
		{"\xff\xfe", ""},
		{strings.Repeat("a", 201), ""},
	} {
		got := CSSFamily(c.in)
		if got != c.want {
			t.Errorf("CSSFamily(%q) = %s, want %s", c.in, got, c.want)
		}
		if strings.ContainsAny(strings.Trim(got, `"`), "\"<>\n\r\x00") {
			t.Errorf("CSSFamily(%q) = %s lets a quote, bracket or newline through", c.in, got)
		}
	}
}

// fcMatch is fontconfig's own answer (fc-match, from the fontconfig package).
func fcMatch(t *testing.T, env ...string) string {
	t.Helper()
	bin, err := exec.LookPath("fc-match")
	if err != nil {
		t.Fatal("fc-match is not installed (Debian: fontconfig; scripts/setup.sh installs it)")
	}
	cmd := exec.Command(bin, "-f", "%{family[0]}", "system-ui")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fc-match: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestSystemUIIsFontconfigsMatch(t *testing.T) {
	if runtime.GOOS != "linux" {
		if got := SystemUI(); got != "" {
			t.Fatalf("SystemUI() = %q outside Linux, want \"\"", got)
		}
		return
	}
	want := fcMatch(t)
	if got := SystemUI(); got == "" || got != want {
		t.Fatalf("SystemUI() = %q, fc-match system-ui says %q", got, want)
	}
}
