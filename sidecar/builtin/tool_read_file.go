package builtin

import (
	"context"

	"talaria/sidecar/builtin/tools"
)

// readFileTool is the read_file tool: it reads lines of a text file of the workspace.
type readFileTool struct{}

// Def is the read_file tool's definition.
func (readFileTool) Def() ToolDef {
	return ToolDef{
		Name: "read_file", Toolset: ToolsetFile,
		Description: "Read a text file of the workspace. Returns its lines (from offset, at most limit lines and 128 KiB), " +
			"the line numbers returned and the file's line count.",
		Parameters: `{"type":"object","properties":{
"path":{"type":"string","description":"File path, relative to the workspace (or absolute inside it)."},
"offset":{"type":"integer","description":"First line to read, counting from 1 (default 1).","minimum":1},
"limit":{"type":"integer","description":"How many lines to read (default 2000).","minimum":1}
},"required":["path"],"additionalProperties":false}`,
	}
}

// KeyArg is the argument the read_file card shows in its title.
func (readFileTool) KeyArg(args map[string]any) string { return stringArg(args, "path") }

func (readFileTool) run(ctx context.Context, t *turn, raw []byte) toolResult {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errResult("bad arguments for read_file: %v", err)
	}
	return t.withWorkspace(func(ws *tools.Workspace) toolResult {
		res, err := ws.ReadFile(a.Path, a.Offset, a.Limit)
		if err != nil {
			return errResult("%v", err)
		}
		return toolResult{value: res, preview: res.Content}
	})
}
