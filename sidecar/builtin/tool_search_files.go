package builtin

import (
	"context"
	"fmt"
	"strings"

	"talaria/sidecar/builtin/tools"
)

// searchFilesTool is the search_files tool: it searches the text files of the workspace for a pattern.
type searchFilesTool struct{}

// Def is the search_files tool's definition.
func (searchFilesTool) Def() ToolDef {
	return ToolDef{
		Name: "search_files", Toolset: ToolsetFile,
		Description: "Search the text files of the workspace (or one folder or file of it) for lines matching a regular " +
			"expression (RE2 syntax) or literal text. Skips .git, node_modules, binary files and files over 4 MiB. " +
			"Returns path, line number and text of each match, up to max_matches.",
		Parameters: `{"type":"object","properties":{
"pattern":{"type":"string","description":"A regular expression (RE2), or literal text when literal is set."},
"path":{"type":"string","description":"Folder or file to search, relative to the workspace (default: the workspace)."},
"glob":{"type":"string","description":"Only files whose name matches this glob, e.g. *.go."},
"literal":{"type":"boolean","description":"Treat pattern as literal text (default false)."},
"ignore_case":{"type":"boolean","description":"Match case-insensitively (default false)."},
"max_matches":{"type":"integer","description":"At most this many matches (default 100, at most 1000).","minimum":1}
},"required":["pattern"],"additionalProperties":false}`,
	}
}

// KeyArg is the argument the search_files card shows in its title.
func (searchFilesTool) KeyArg(args map[string]any) string { return stringArg(args, "pattern") }

func (searchFilesTool) run(ctx context.Context, t *turn, raw []byte) toolResult {
	var a struct {
		Pattern    string `json:"pattern"`
		Path       string `json:"path"`
		Glob       string `json:"glob"`
		Literal    bool   `json:"literal"`
		IgnoreCase bool   `json:"ignore_case"`
		MaxMatches int    `json:"max_matches"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errResult("bad arguments for search_files: %v", err)
	}
	return t.withWorkspace(func(ws *tools.Workspace) toolResult {
		res, err := ws.SearchFiles(ctx, a.Pattern, a.Path, a.Glob, a.Literal, a.IgnoreCase, a.MaxMatches)
		if err != nil {
			return errResult("%v", err)
		}
		var sb strings.Builder
		for _, m := range res.Matches {
			fmt.Fprintf(&sb, "%s:%d: %s\n", m.Path, m.Line, m.Text)
		}
		if len(res.Matches) == 0 {
			sb.WriteString("no matches")
		}
		return toolResult{value: res, preview: sb.String()}
	})
}
