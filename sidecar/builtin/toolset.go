package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
)

// The tools the model is offered, one file each (tool_<name>.go) behind the Tool
// interface, and the registry the turn offers and dispatches them by: name, toolset
// (what enabled_toolsets selects) and the JSON schema of the arguments, in the OpenAI
// "tools" shape.

// Toolsets: enabled_toolsets names; empty or absent offers every tool.
const (
	ToolsetTerminal = "terminal" // terminal
	ToolsetFile     = "file"     // read_file, write_file, patch, list_files, search_files
	ToolsetTodo     = "todo"     // todo
	ToolsetClarify  = "clarify"  // clarify
	ToolsetVault    = "vault"    // request_secret
)

// ToolDef is what the model is told of a tool.
type ToolDef struct {
	// Name is what the model calls it by.
	Name string
	// Toolset is the enabled_toolsets name that offers it (a Toolset* constant).
	Toolset string
	// Description tells the model what it does.
	Description string
	// Parameters is the JSON schema of its arguments, a JSON object.
	Parameters string
}

// Tool is one built-in tool the model may call. Each is in a file of its own
// (tool_<name>.go) and listed once in registry; the turn offers the tools the chat's
// enabled_toolsets select and dispatches a call by its name. Only this package
// implements it: run works on the turn.
type Tool interface {
	// Def is the tool's name, toolset, description and argument schema.
	Def() ToolDef
	// KeyArg is the argument the tool's card shows in its title, unredacted and
	// uncut ("" when none); args are the call's arguments as decoded JSON.
	KeyArg(args map[string]any) string
	// run decodes the call's arguments (raw, a JSON object) and runs the call in t,
	// approvals included; every failure is a result the model reads, never a panic.
	run(ctx context.Context, t *turn, raw []byte) toolResult
}

// registry is every built-in tool, in the order the model is offered them.
var registry = []Tool{
	terminalTool{},
	readFileTool{},
	writeFileTool{},
	patchTool{},
	listFilesTool{},
	searchFilesTool{},
	todoTool{},
	clarifyTool{},
	requestSecretTool{},
}

// toolNamed is the built-in tool called name, or nil.
func toolNamed(name string) Tool {
	for _, tl := range registry {
		if tl.Def().Name == name {
			return tl
		}
	}
	return nil
}

// stringArg is the string argument key of args ("" when it is absent or no string).
func stringArg(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return s
}

// decodeArgs decodes a call's arguments into v. Unknown fields are forgiven: a
// decoding that fails on them is done again without the check.
func decodeArgs(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if err2 := json.Unmarshal(raw, v); err2 != nil {
			return err2
		}
	}
	return nil
}

// offeredTools returns the tool names offered for enabled_toolsets (every tool when it
// is empty; unknown toolset names are ignored).
func offeredTools(toolsets []string) map[string]bool {
	out := map[string]bool{}
	for _, tl := range registry {
		d := tl.Def()
		if len(toolsets) == 0 || slices.Contains(toolsets, d.Toolset) {
			out[d.Name] = true
		}
	}
	return out
}

// toolsJSON is the request's "tools" member for the offered tools, in registry order.
func toolsJSON(offered map[string]bool) []json.RawMessage {
	var out []json.RawMessage
	for _, tl := range registry {
		d := tl.Def()
		if !offered[d.Name] {
			continue
		}
		b, err := json.Marshal(map[string]any{
			"type": "function",
			"function": map[string]any{
				"name":        d.Name,
				"description": d.Description,
				"parameters":  json.RawMessage(d.Parameters),
			},
		})
		if err != nil {
			panic("builtin: tool schema of " + d.Name + ": " + err.Error())
		}
		out = append(out, b)
	}
	return out
}
