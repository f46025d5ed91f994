package builtin

import (
	"context"

	"talaria/sidecar/builtin/tools"
)

// patchTool is the patch tool: it replaces an exact piece of text in a file of the workspace (asked first in a read-only chat).
type patchTool struct{}

// Def is the patch tool's definition.
func (patchTool) Def() ToolDef {
	return ToolDef{
		Name: "patch", Toolset: ToolsetFile,
		Description: "Edit a file of the workspace by replacing an exact piece of text. old_string must match the file exactly " +
			"(white space included) and occur once, unless replace_all is set. Returns a unified diff of the change.",
		Parameters: `{"type":"object","properties":{
"path":{"type":"string","description":"File path, relative to the workspace (or absolute inside it)."},
"old_string":{"type":"string","description":"The exact text to replace; include enough surrounding lines to make it unique."},
"new_string":{"type":"string","description":"The text to put in its place."},
"replace_all":{"type":"boolean","description":"Replace every occurrence (default false)."}
},"required":["path","old_string","new_string"],"additionalProperties":false}`,
	}
}

// KeyArg is the argument the patch card shows in its title.
func (patchTool) KeyArg(args map[string]any) string { return stringArg(args, "path") }

func (patchTool) run(ctx context.Context, t *turn, raw []byte) toolResult {
	var a struct {
		Path       string `json:"path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errResult("bad arguments for patch: %v", err)
	}
	if ok, res := t.approveWrite(ctx, "patch", a.Path); !ok {
		return res
	}
	return t.withWorkspace(func(ws *tools.Workspace) toolResult {
		res, err := ws.Patch(a.Path, a.OldString, a.NewString, a.ReplaceAll)
		if err != nil {
			return errResult("%v", err)
		}
		return editResult(res)
	})
}
