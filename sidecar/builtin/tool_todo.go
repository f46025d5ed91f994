package builtin

import (
	"context"
	"fmt"
	"strings"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
)

// todoTool is the todo tool: it keeps the session's todo list, shown to the user.
type todoTool struct{}

// Def is the todo tool's definition.
func (todoTool) Def() ToolDef {
	return ToolDef{
		Name: "todo", Toolset: ToolsetTodo,
		Description: "Keep a todo list for the task, shown to the user. Send the whole list, or with merge send only the items " +
			"to add or update (matched by id). Call it with no todos to read the list. Statuses: pending, in_progress, completed, " +
			"cancelled; keep one item in_progress at a time.",
		Parameters: `{"type":"object","properties":{
"todos":{"type":"array","description":"Items of the list.","items":{"type":"object","properties":{
"id":{"type":"string","description":"A short unique id."},
"content":{"type":"string","description":"What to do."},
"status":{"type":"string","enum":["pending","in_progress","completed","cancelled"]}
},"required":["id"]}},
"merge":{"type":"boolean","description":"Update and add items instead of replacing the list (default false)."}
},"additionalProperties":false}`,
	}
}

// KeyArg is the argument the todo card shows in its title.
func (todoTool) KeyArg(args map[string]any) string {
	if list, ok := args["todos"].([]any); ok {
		return fmt.Sprintf("%d items", len(list))
	}
	return ""
}

func (todoTool) run(ctx context.Context, t *turn, raw []byte) toolResult {
	var a struct {
		Todos *[]tools.TodoInput `json:"todos"`
		Merge bool               `json:"merge"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errResult("bad arguments for todo: %v", err)
	}
	var list []protocol.TodoItem
	if a.Todos == nil {
		list = t.r.todos(t.p.SessionID)
	} else {
		var err error
		if list, err = t.r.updateTodos(t.p.SessionID, *a.Todos, a.Merge); err != nil {
			return errResult("%v", err)
		}
	}
	if list == nil {
		list = []protocol.TodoItem{}
	}
	return toolResult{value: protocol.TodoList{Todos: list}, preview: todoPreview(list), todos: list, isTodo: true}
}

func todoPreview(list []protocol.TodoItem) string {
	if len(list) == 0 {
		return "the todo list is empty"
	}
	marks := map[string]string{tools.TodoPending: "[ ]", tools.TodoInProgress: "[~]", tools.TodoCompleted: "[x]", tools.TodoCancelled: "[-]"}
	var sb strings.Builder
	for _, it := range list {
		fmt.Fprintf(&sb, "%s %s\n", marks[it.Status], it.Content)
	}
	return sb.String()
}
