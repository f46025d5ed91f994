package builtin

import (
	"context"
	"strings"

	"talaria/sidecar/builtin/tools"
)

// listFilesTool is the list_files tool: it lists a folder of the workspace.
type listFilesTool struct{}

// Def is the list_files tool's definition.
func (listFilesTool) Def() ToolDef {
	return ToolDef{
		Name: "list_files", Toolset: ToolsetFile,
		Description: "List a folder of the workspace; folders end in /. With recursive, lists everything below it " +
			"(.git and node_modules are listed but not entered), up to max_entries.",
		Parameters: `{"type":"object","properties":{
"path":{"type":"string","description":"Folder path, relative to the workspace (default: the workspace)."},
"recursive":{"type":"boolean","description":"List subfolders too (default false)."},
"max_entries":{"type":"integer","description":"At most this many entries (default 500, at most 5000).","minimum":1}
},"additionalProperties":false}`,
	}
}

// KeyArg is the argument the list_files card shows in its title.
func (listFilesTool) KeyArg(args map[string]any) string { return stringArg(args, "path") }

func (listFilesTool) run(ctx context.Context, t *turn, raw []byte) toolResult {
	var a struct {
		Path       string `json:"path"`
		Recursive  bool   `json:"recursive"`
		MaxEntries int    `json:"max_entries"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errResult("bad arguments for list_files: %v", err)
	}
	return t.withWorkspace(func(ws *tools.Workspace) toolResult {
		res, err := ws.ListFiles(ctx, a.Path, a.Recursive, a.MaxEntries)
		if err != nil {
			return errResult("%v", err)
		}
		return toolResult{value: res, preview: strings.Join(res.Entries, "\n")}
	})
}
