package turn

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseEditDiff(t *testing.T) {
	two := "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,4 @@\n package main\n-func a() {}\n+func a() int { return 1 }\n+func b() {}\n \n" +
		"--- a/docs/x.md\n+++ b/docs/x.md\n@@ -1,2 +1,1 @@\n-old\n-older\n+new\n"
	cases := []struct {
		name string
		in   string
		want *EditDiff
	}{
		{"empty", "", nil},
		{"not a diff", "hello", nil},
		{"two files, counted over the whole diff", two, &EditDiff{Files: []string{"main.go", "docs/x.md"}, Added: 3, Removed: 3}},
		{"new file", "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n", &EditDiff{Files: []string{"new.txt"}, Added: 2}},
		{"deleted file", "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", &EditDiff{Files: []string{"gone.txt"}, Removed: 1}},
	}
	for _, c := range cases {
		if got := ParseEditDiff(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestIsToolError(t *testing.T) {
	cases := map[string]bool{
		`{"output":"ok","exit_code":0,"error":""}`: false,
		`{"output":"","exit_code":2,"error":""}`:   true,
		`{"exit_code":0,"error":"timed out"}`:      true,
		`{"error":{"message":"x"}}`:                true,
		`{"error":null,"success":true}`:            false,
		`{"success":false}`:                        true,
		`{"error":true}`:                           true,
		`"plain string"`:                           false,
		``:                                         false,
	}
	for in, want := range cases {
		if got := IsToolError(json.RawMessage(in)); got != want {
			t.Errorf("IsToolError(%s) = %v, want %v", in, got, want)
		}
	}
}
