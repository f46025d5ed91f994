package builtin

import (
	"context"

	"talaria/sidecar/builtin/tools"
)

// writeFileTool is the write_file tool: it creates or overwrites a file of the workspace (asked first in a read-only chat).
type writeFileTool struct{}

// Def is the write_file tool's definition.
func (writeFileTool) Def() ToolDef {
	return ToolDef{
		Name: "write_file", Toolset: ToolsetFile,
		Description: "Create or overwrite a file of the workspace with the given content (parent folders are created). " +
			"Returns a unified diff of the change. Prefer patch for small edits of an existing file.",
		Parameters: `{"type":"object","properties":{
"path":{"type":"string","description":"File path, relative to the workspace (or absolute inside it)."},
"content":{"type":"string","description":"The whole new content of the file."}
},"required":["path","content"],"additionalProperties":false}`,
	}
}

// KeyArg is the argument the write_file card shows in its title.
func (writeFileTool) KeyArg(args map[string]any) string { return stringArg(args, "path") }

func (writeFileTool) run(ctx context.Context, t *turn, raw []byte) toolResult {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errResult("bad arguments for write_file: %v", err)
	}
	if ok, res := t.approveWrite(ctx, "write_file", a.Path); !ok {
		return res
	}
	return t.withWorkspace(func(ws *tools.Workspace) toolResult {
		res, err := ws.WriteFile(a.Path, a.Content)
		if err != nil {
			return errResult("%v", err)
		}
		return editResult(res)
	})
}
