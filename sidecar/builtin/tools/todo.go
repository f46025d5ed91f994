package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"talaria/sidecar/protocol"
)

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
	TodoCancelled  = "cancelled"
)

// Todo limits.
const (
	MaxTodos       = 100
	MaxTodoContent = 1000 // bytes of one item's content
)

// TodoInput is one item of the todo tool's arguments. ID may be a string or a number;
// in a merge, Content and Status may be left out to keep the current values.
type TodoInput struct {
	ID      json.RawMessage `json:"id"`
	Content *string         `json:"content"`
	Status  *string         `json:"status"`
}

// ApplyTodos returns the list after a todo call: with merge, items update the ones of
// the same id and new ids are appended; without, the items replace the list. Errors: a
// missing or duplicate id, an unknown status, a new item without content, more than
// MaxTodos items. The current list is never modified.
func ApplyTodos(current []protocol.TodoItem, items []TodoInput, merge bool) ([]protocol.TodoItem, error) {
	var out []protocol.TodoItem
	if merge {
		out = append(out, current...)
	}
	index := map[string]int{}
	for i, it := range out {
		index[it.ID] = i
	}
	seen := map[string]bool{}
	for n, in := range items {
		id, err := todoID(in.ID)
		if err != nil {
			return nil, fmt.Errorf("todo %d: %w", n+1, err)
		}
		if seen[id] {
			return nil, fmt.Errorf("todo id %q appears twice", id)
		}
		seen[id] = true
		if in.Status != nil && !validStatus(*in.Status) {
			return nil, fmt.Errorf("todo %q: status %q is not one of pending, in_progress, completed, cancelled", id, *in.Status)
		}
		if i, ok := index[id]; ok {
			if in.Content != nil && strings.TrimSpace(*in.Content) != "" {
				out[i].Content = capContent(*in.Content)
			}
			if in.Status != nil {
				out[i].Status = *in.Status
			}
			continue
		}
		if in.Content == nil || strings.TrimSpace(*in.Content) == "" {
			return nil, fmt.Errorf("todo %q has no content", id)
		}
		item := protocol.TodoItem{ID: id, Content: capContent(*in.Content), Status: TodoPending}
		if in.Status != nil {
			item.Status = *in.Status
		}
		index[id] = len(out)
		out = append(out, item)
	}
	if len(out) > MaxTodos {
		return nil, fmt.Errorf("the list would have %d items; the limit is %d", len(out), MaxTodos)
	}
	if out == nil {
		out = []protocol.TodoItem{}
	}
	return out, nil
}

func todoID(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s = strings.TrimSpace(s); s != "" {
			return s, nil
		}
		return "", errors.New("empty id")
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if _, err := strconv.ParseFloat(string(n), 64); err == nil {
			return string(n), nil
		}
	}
	return "", errors.New("missing id (a string or a number)")
}

func validStatus(s string) bool {
	switch s {
	case TodoPending, TodoInProgress, TodoCompleted, TodoCancelled:
		return true
	}
	return false
}

func capContent(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > MaxTodoContent {
		s, _ = Cap(s, MaxTodoContent)
	}
	return s
}
