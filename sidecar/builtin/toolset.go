package builtin

import (
	"encoding/json"
	"slices"
)

// The tools the model is offered: name, toolset (what enabled_toolsets selects) and the
// JSON schema of the arguments, in the OpenAI "tools" shape.

// Toolsets: enabled_toolsets names; empty or absent offers every tool.
const (
	ToolsetTerminal = "terminal" // terminal
	ToolsetFile     = "file"     // read_file, write_file, patch, list_files, search_files
	ToolsetTodo     = "todo"     // todo
	ToolsetClarify  = "clarify"  // clarify
	ToolsetVault    = "vault"    // request_secret
)

type toolSpec struct {
	name    string
	toolset string
	// keyArg is the argument a card shows in its title.
	keyArg      string
	description string
	parameters  string // JSON schema
}

var toolSpecs = []toolSpec{
	{
		name: "terminal", toolset: ToolsetTerminal, keyArg: "command",
		description: "Run a shell command (bash, else sh) in the workspace folder and return its output (stdout and stderr merged, " +
			"long output cut in the middle), exit code and error. Commands run in a sandbox (the result's sandbox field says which): " +
			"by default they may write only the workspace and /tmp (a private one), have no network, and never see secret stores " +
			"such as ~/.ssh. If a command needs more, call it again with escalate (network, write, or full for outside the sandbox) " +
			"and a justification; the user is asked. Stdin is closed, so interactive programs must get their input from flags or " +
			"files. The command and everything it started are killed at the timeout, and when it exits: background jobs (&) do " +
			"not outlive the call. Dangerous commands (recursive deletes, sudo, force pushes ...) wait for the user's approval, " +
			"and some are always refused. Secrets the user gave through request_secret are set as environment variables.",
		parameters: `{"type":"object","properties":{
"command":{"type":"string","description":"The shell command line to run."},
"timeout":{"type":"integer","description":"Seconds before the command is killed (default 120, at most 600).","minimum":1,"maximum":600},
"escalate":{"type":"string","enum":["network","write","full"],"description":"Only when the sandbox stops the command: network (network access), write (write the workspace in a read-only chat), full (run outside the sandbox). The user is asked."},
"justification":{"type":"string","description":"With escalate: one sentence telling the user why the command needs it."}
},"required":["command"],"additionalProperties":false}`,
	},
	{
		name: "read_file", toolset: ToolsetFile, keyArg: "path",
		description: "Read a text file of the workspace. Returns its lines (from offset, at most limit lines and 128 KiB), " +
			"the line numbers returned and the file's line count.",
		parameters: `{"type":"object","properties":{
"path":{"type":"string","description":"File path, relative to the workspace (or absolute inside it)."},
"offset":{"type":"integer","description":"First line to read, counting from 1 (default 1).","minimum":1},
"limit":{"type":"integer","description":"How many lines to read (default 2000).","minimum":1}
},"required":["path"],"additionalProperties":false}`,
	},
	{
		name: "write_file", toolset: ToolsetFile, keyArg: "path",
		description: "Create or overwrite a file of the workspace with the given content (parent folders are created). " +
			"Returns a unified diff of the change. Prefer patch for small edits of an existing file.",
		parameters: `{"type":"object","properties":{
"path":{"type":"string","description":"File path, relative to the workspace (or absolute inside it)."},
"content":{"type":"string","description":"The whole new content of the file."}
},"required":["path","content"],"additionalProperties":false}`,
	},
	{
		name: "patch", toolset: ToolsetFile, keyArg: "path",
		description: "Edit a file of the workspace by replacing an exact piece of text. old_string must match the file exactly " +
			"(white space included) and occur once, unless replace_all is set. Returns a unified diff of the change.",
		parameters: `{"type":"object","properties":{
"path":{"type":"string","description":"File path, relative to the workspace (or absolute inside it)."},
"old_string":{"type":"string","description":"The exact text to replace; include enough surrounding lines to make it unique."},
"new_string":{"type":"string","description":"The text to put in its place."},
"replace_all":{"type":"boolean","description":"Replace every occurrence (default false)."}
},"required":["path","old_string","new_string"],"additionalProperties":false}`,
	},
	{
		name: "list_files", toolset: ToolsetFile, keyArg: "path",
		description: "List a folder of the workspace; folders end in /. With recursive, lists everything below it " +
			"(.git and node_modules are listed but not entered), up to max_entries.",
		parameters: `{"type":"object","properties":{
"path":{"type":"string","description":"Folder path, relative to the workspace (default: the workspace)."},
"recursive":{"type":"boolean","description":"List subfolders too (default false)."},
"max_entries":{"type":"integer","description":"At most this many entries (default 500, at most 5000).","minimum":1}
},"additionalProperties":false}`,
	},
	{
		name: "search_files", toolset: ToolsetFile, keyArg: "pattern",
		description: "Search the text files of the workspace (or one folder or file of it) for lines matching a regular " +
			"expression (RE2 syntax) or literal text. Skips .git, node_modules, binary files and files over 4 MiB. " +
			"Returns path, line number and text of each match, up to max_matches.",
		parameters: `{"type":"object","properties":{
"pattern":{"type":"string","description":"A regular expression (RE2), or literal text when literal is set."},
"path":{"type":"string","description":"Folder or file to search, relative to the workspace (default: the workspace)."},
"glob":{"type":"string","description":"Only files whose name matches this glob, e.g. *.go."},
"literal":{"type":"boolean","description":"Treat pattern as literal text (default false)."},
"ignore_case":{"type":"boolean","description":"Match case-insensitively (default false)."},
"max_matches":{"type":"integer","description":"At most this many matches (default 100, at most 1000).","minimum":1}
},"required":["pattern"],"additionalProperties":false}`,
	},
	{
		name: "todo", toolset: ToolsetTodo, keyArg: "",
		description: "Keep a todo list for the task, shown to the user. Send the whole list, or with merge send only the items " +
			"to add or update (matched by id). Call it with no todos to read the list. Statuses: pending, in_progress, completed, " +
			"cancelled; keep one item in_progress at a time.",
		parameters: `{"type":"object","properties":{
"todos":{"type":"array","description":"Items of the list.","items":{"type":"object","properties":{
"id":{"type":"string","description":"A short unique id."},
"content":{"type":"string","description":"What to do."},
"status":{"type":"string","enum":["pending","in_progress","completed","cancelled"]}
},"required":["id"]}},
"merge":{"type":"boolean","description":"Update and add items instead of replacing the list (default false)."}
},"additionalProperties":false}`,
	},
	{
		name: "clarify", toolset: ToolsetClarify, keyArg: "",
		description: "Ask the user one to five questions and wait for the answers. Each question may offer up to 4 choices " +
			"(the user may still answer in their own words) and may allow several choices. Use it when you cannot go on " +
			"without the user's decision; do not ask what you can find out yourself.",
		parameters: `{"type":"object","properties":{
"questions":{"type":"array","minItems":1,"maxItems":5,"items":{"type":"object","properties":{
"question":{"type":"string"},
"choices":{"type":"array","maxItems":4,"items":{"type":"string"}},
"multi_select":{"type":"boolean","description":"Several choices may be picked (default false)."}
},"required":["question"]}}
},"required":["questions"],"additionalProperties":false}`,
	},
	{
		name: "request_secret", toolset: ToolsetVault, keyArg: "name",
		description: "Ask the user for a secret (an API token, a password) that a terminal command needs. The user types it " +
			"into a masked field; it is set as the environment variable `name` for later terminal commands of this session. " +
			"You never see the value: refer to it as $NAME in commands, and never try to print it.",
		parameters: `{"type":"object","properties":{
"name":{"type":"string","description":"The environment variable, upper case, e.g. GITHUB_TOKEN.","pattern":"^[A-Z_][A-Z0-9_]*$"},
"reason":{"type":"string","description":"Why it is needed, shown to the user."}
},"required":["name","reason"],"additionalProperties":false}`,
	},
}

func specFor(name string) *toolSpec {
	for i := range toolSpecs {
		if toolSpecs[i].name == name {
			return &toolSpecs[i]
		}
	}
	return nil
}

// offeredTools returns the tool names offered for enabled_toolsets (every tool when it
// is empty; unknown toolset names are ignored).
func offeredTools(toolsets []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range toolSpecs {
		if len(toolsets) == 0 || slices.Contains(toolsets, s.toolset) {
			out[s.name] = true
		}
	}
	return out
}

// toolsJSON is the request's "tools" member for the offered tools, in table order.
func toolsJSON(offered map[string]bool) []json.RawMessage {
	var out []json.RawMessage
	for _, s := range toolSpecs {
		if !offered[s.name] {
			continue
		}
		b, err := json.Marshal(map[string]any{
			"type": "function",
			"function": map[string]any{
				"name":        s.name,
				"description": s.description,
				"parameters":  json.RawMessage(s.parameters),
			},
		})
		if err != nil {
			panic("builtin: tool schema of " + s.name + ": " + err.Error())
		}
		out = append(out, b)
	}
	return out
}
