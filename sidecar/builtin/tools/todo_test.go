package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
)

func todoInputs(t *testing.T, s string) []TodoInput {
	t.Helper()
	var in []TodoInput
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func TestApplyTodos(t *testing.T) {
	list, err := ApplyTodos(nil, todoInputs(t, `[{"id":"1","content":"read","status":"in_progress"},{"id":2,"content":"write"}]`), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []protocol.TodoItem{{ID: "1", Content: "read", Status: "in_progress"}, {ID: "2", Content: "write", Status: "pending"}}
	if b, w := mustJSON(list), mustJSON(want); b != w {
		t.Fatalf("%s", b)
	}
	merged, err := ApplyTodos(list, todoInputs(t, `[{"id":"1","status":"completed"},{"id":"3","content":"test","status":"pending"}]`), true)
	if err != nil || mustJSON(merged) != `[{"id":"1","content":"read","status":"completed"},{"id":"2","content":"write","status":"pending"},{"id":"3","content":"test","status":"pending"}]` {
		t.Fatalf("%s %v", mustJSON(merged), err)
	}
	if mustJSON(list) != mustJSON(want) {
		t.Fatal("the current list was modified")
	}
	replaced, err := ApplyTodos(merged, todoInputs(t, `[]`), false)
	if err != nil || mustJSON(replaced) != "[]" {
		t.Fatalf("%s %v", mustJSON(replaced), err)
	}
	for in, msg := range map[string]string{
		`[{"content":"x"}]`:                                   "missing id",
		`[{"id":"","content":"x"}]`:                           "empty id",
		`[{"id":"a","content":"x","status":"done"}]`:          "status",
		`[{"id":"a"}]`:                                        "no content",
		`[{"id":"a","content":"x"},{"id":"a","content":"y"}]`: "twice",
		`[{"id":true,"content":"x"}]`:                         "missing id",
	} {
		if _, err := ApplyTodos(nil, todoInputs(t, in), false); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", in, err, msg)
		}
	}
	many := "[" + strings.Repeat(`{"id":"x","content":"y"},`, 0)
	for i := 0; i <= MaxTodos; i++ {
		if i > 0 {
			many += ","
		}
		many += `{"id":` + mustJSON(i) + `,"content":"y"}`
	}
	if _, err := ApplyTodos(nil, todoInputs(t, many+"]"), false); err == nil {
		t.Fatal("over the limit")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
