package app

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"talaria/backend"
	"talaria/backend/store"
	"talaria/backend/vault"
)

type listsInner struct {
	Tags []string `json:"tags"`
}

type listsOuter struct {
	Names    []string              `json:"names"`
	Optional []string              `json:"optional,omitempty"`
	Byname   map[string]listsInner `json:"byname"`
	Inner    *listsInner           `json:"inner"`
	None     *listsInner           `json:"none"`
	Items    []listsInner          `json:"items"`
	Raw      json.RawMessage       `json:"raw"`
}

// lists makes every list the JSON would carry as null empty, leaves omitted and
// nullable members alone, copies what it changes instead of writing into the
// backend's values, and copies nothing when nothing is nil.
func TestListsFillsNilListsWithoutTouchingTheOriginal(t *testing.T) {
	in := listsOuter{Byname: map[string]listsInner{"a": {}}, Inner: &listsInner{}, Items: []listsInner{{Tags: []string{"x"}}, {}}}
	out := lists(in)
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"names":[],"byname":{"a":{"tags":[]}},"inner":{"tags":[]},"none":null,"items":[{"tags":["x"]},{"tags":[]}],"raw":null}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	if in.Names != nil || in.Byname["a"].Tags != nil || in.Inner.Tags != nil || in.Items[1].Tags != nil {
		t.Fatalf("the original was changed: %+v", in)
	}
	full := []listsInner{{Tags: []string{"x"}}}
	if got := lists(full); &got[0] != &full[0] {
		t.Fatal("a value with no nil list was copied")
	}
	if got := lists([]string(nil)); got == nil || len(got) != 0 {
		t.Fatalf("lists(nil slice) = %#v", got)
	}
}

// nullLists returns the paths where the JSON v (decoded into any) has null for a Go
// list of type t: what the contract's `T[]` or Record would not accept. Members the
// JSON omits and types with their own encoding are not looked at.
func nullLists(typ reflect.Type, v any, path string) []string {
	if typ.Implements(jsonMarshaler) || reflect.PointerTo(typ).Implements(jsonMarshaler) {
		return nil
	}
	var out []string
	switch typ.Kind() {
	case reflect.Pointer:
		if v != nil {
			out = nullLists(typ.Elem(), v, path)
		}
	case reflect.Slice, reflect.Map:
		if v == nil {
			return []string{path}
		}
		if arr, ok := v.([]any); ok {
			for i, e := range arr {
				out = append(out, nullLists(typ.Elem(), e, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
		if m, ok := v.(map[string]any); ok && typ.Kind() == reflect.Map {
			for k, e := range m {
				out = append(out, nullLists(typ.Elem(), e, path+"."+k)...)
			}
		}
	case reflect.Struct:
		m, _ := v.(map[string]any)
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				out = append(out, nullLists(f.Type, v, path)...)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if e, ok := m[name]; ok {
				out = append(out, nullLists(f.Type, e, path+"."+name)...)
			}
		}
	}
	return out
}

// canHoldList reports whether a value of typ can carry a list in its JSON.
func canHoldList(typ reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[typ] || typ.Implements(jsonMarshaler) || reflect.PointerTo(typ).Implements(jsonMarshaler) {
		return false
	}
	seen[typ] = true
	switch typ.Kind() {
	case reflect.Slice, reflect.Map:
		return true
	case reflect.Pointer:
		return canHoldList(typ.Elem(), seen)
	case reflect.Struct:
		for i := range typ.NumField() {
			if f := typ.Field(i); (f.IsExported() || f.Anonymous) && canHoldList(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// What the window reads marshals no null where the contract has a list, on a new
// data folder (where lists are empty, so nil when nothing makes them) with one chat:
// the bound services call every method that returns a list and needs no sidecar,
// agent, network, dialog or change, through the real backend. A method that returns a
// list is either called here or named with why it is not.
func TestBoundResultsHaveNoNullLists(t *testing.T) {
	ctx := context.Background()
	svc, err := backend.Open(ctx, backend.Options{DataDir: t.TempDir(), Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	sess, err := svc.Store.CreateSession(ctx, store.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Store.AppendMessages(ctx, sess.ID, sess.Revision, []store.Message{{Role: "user", Content: "hello"},
		{Role: "assistant", Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	b := ServicesOf(&App{svc: svc})
	id := sess.ID
	type result = func() (any, error)
	pair := func(v any, err error) (any, error) { return v, err }
	reads := map[string]result{
		"Chats.GetRecoveryReport":    func() (any, error) { return pair(b.Chats.GetRecoveryReport()) },
		"Chats.GetSession":           func() (any, error) { return pair(b.Chats.GetSession(id)) },
		"Chats.GetTranscript":        func() (any, error) { return pair(b.Chats.GetTranscript(id, -1, 50)) },
		"Chats.GetTranscriptFrom":    func() (any, error) { return pair(b.Chats.GetTranscriptFrom(id, 0, 50)) },
		"Chats.ListArchivedSessions": func() (any, error) { return pair(b.Chats.ListArchivedSessions()) },
		"Chats.ListSessions":         func() (any, error) { return pair(b.Chats.ListSessions()) },
		"Chats.ListSessionsPage":     func() (any, error) { return pair(b.Chats.ListSessionsPage(0, 50)) },
		"Chats.SearchSessions":       func() (any, error) { return pair(b.Chats.SearchSessions("nothing matches this", 30)) },
		"Turns.ChatFigures":          func() (any, error) { return pair(b.Turns.ChatFigures(id, nil)) },
		"Turns.PendingSteers":        func() (any, error) { return b.Turns.PendingSteers(id), nil },
		"Turns.StagedAttachments":    func() (any, error) { return pair(b.Turns.StagedAttachments(id)) },
		"Approvals.GetAllowlist":     func() (any, error) { return pair(b.Approvals.GetAllowlist()) },
		"Approvals.ListAudit":        func() (any, error) { return pair(b.Approvals.ListAudit(store.AuditFilter{})) },
		"Settings.GetChatOptions":    func() (any, error) { return pair(b.Settings.GetChatOptions(id)) },
		"Settings.GetChatSettings":   func() (any, error) { return pair(b.Settings.GetChatSettings(id)) },
		"ACP.ACPAgents":              func() (any, error) { return pair(b.ACP.ACPAgents()) },
		"ACP.ACPPresets":             func() (any, error) { return b.ACP.ACPPresets(), nil },
		"Agents.GetStatus":           func() (any, error) { return b.Agents.GetStatus(), nil },
		"Agents.ListRuntimes":        func() (any, error) { return pair(b.Agents.ListRuntimes()) },
		"Agents.RuntimeStatuses":     func() (any, error) { return b.Agents.RuntimeStatuses(), nil },
		"MCP.GetChatMCP":             func() (any, error) { return pair(b.MCP.GetChatMCP(id)) },
		"MCP.ListMCPServers":         func() (any, error) { return pair(b.MCP.ListMCPServers()) },
		"Tasks.ListBackgroundTasks":  func() (any, error) { return pair(b.Tasks.ListBackgroundTasks(id)) },
		"About.GetAbout":             func() (any, error) { return b.About.GetAbout(), nil },
		"About.GetActivity":          func() (any, error) { return b.About.GetActivity(), nil },
		"About.GetDiagnostics":       func() (any, error) { return b.About.GetDiagnostics(), nil },
		"About.TakeLaunchActions":    func() (any, error) { return b.About.TakeLaunchActions(), nil },
		"Imports.CancelImport":       func() (any, error) { return b.Imports.CancelImport(""), nil },
		"Imports.ImportStatus":       func() (any, error) { return b.Imports.ImportStatus(), nil },
		"Remotes.ListRemoteHosts":    func() (any, error) { return pair(b.Remotes.ListRemoteHosts()) },
	}
	const turnNeeded, agentNeeded, changes, dialog = "starts a turn (the sidecar)", "needs an agent, a server, a host or the network", "changes what is saved", "opens a dialog"
	notRead := map[string]string{
		"Turns.AttachFile": changes, "Turns.AttachmentPreview": changes, "Turns.CompactSession": turnNeeded,
		"Turns.EditAndResend": turnNeeded, "Turns.PickAttachments": dialog, "Turns.Retry": turnNeeded,
		"Turns.SendMessage": turnNeeded, "Turns.StartTurn": turnNeeded, "Turns.Steer": turnNeeded, "Turns.StreamSince": turnNeeded,
		"Settings.CheckProvider": agentNeeded, "ACP.ACPState": agentNeeded, "ACP.SetACPChoice": agentNeeded,
		"ACP.TestACPAgent": agentNeeded, "Agents.GetHermesSettings": agentNeeded, "Agents.SaveHermesSettings": agentNeeded,
		"Agents.HermesHistory": agentNeeded, "Agents.HermesModels": agentNeeded, "Agents.HermesSessions": agentNeeded,
		"ACP.SaveACPAgent": changes, "MCP.ImportMCPServers": changes, "MCP.SaveMCPServer": changes,
		"MCP.SetChatMCPServer": changes, "MCP.ListChatMCP": agentNeeded, "MCP.ReadMCPResource": agentNeeded,
		"MCP.TestMCPServer": agentNeeded, "Imports.StartHermesImport": changes, "Imports.StartWebImport": changes,
		"Remotes.SaveRemoteHost": changes, "Remotes.TestRemoteHost": agentNeeded,
		"ACP.ACPAgentInfo": agentNeeded, "ACP.ACPSessions": agentNeeded,
	}
	for _, s := range b.Bound() {
		st := reflect.TypeOf(s)
		for i := range st.NumMethod() {
			m := st.Method(i)
			name := st.Elem().Name() + "." + m.Name
			if m.Type.NumOut() == 0 || !canHoldList(m.Type.Out(0), map[reflect.Type]bool{}) {
				continue
			}
			_, read := reads[name]
			if _, excused := notRead[name]; !read && !excused {
				t.Errorf("%s returns a list: call it in reads or say in notRead why not", name)
				continue
			}
			if !read {
				continue
			}
			v, err := reads[name]()
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			data, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var decoded any
			if err := json.Unmarshal(data, &decoded); err != nil {
				t.Fatal(err)
			}
			if nulls := nullLists(m.Type.Out(0), decoded, name); len(nulls) > 0 {
				t.Errorf("%s marshals null for a list at %v: %s", name, nulls, data)
			}
		}
	}
}
