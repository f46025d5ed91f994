package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// ChatOptions are a chat's own settings, kept as a JSON object on the session
// (store.Session.Options) and read into every turn of the chat and of the background
// tasks started from it. A zero member means "the default from Settings".
type ChatOptions struct {
	// SystemPrompt is the chat's custom instructions, sent as the system message
	// (chat.start's system_message); "" sends none.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// Tools names the toolsets offered to the agent (chat.start's enabled_toolsets);
	// nil offers all of the runtime's tools, []string{"none"} none.
	Tools []string `json:"tools,omitempty"`
	// ReasoningEffort asks the model to think less or more (chat.start's
	// reasoning_effort: none, low, medium, high); "" leaves it to the provider.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// MaxOutputTokens bounds each answer (chat.start's max_output_tokens, tokens); 0
	// leaves it to the provider.
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// MCPServers turns MCP servers on (true) or off (false) in this chat, by name,
	// over their global setting; a server not named follows the global setting
	// (backend/mcp.go).
	MCPServers map[string]bool `json:"mcp_servers,omitempty"`
}

// maxOutputTokensLimit bounds max_output_tokens (no model answers with more).
const maxOutputTokensLimit = 1_000_000

// chatOptionKeys are ChatOptions' JSON member names, read from its struct tags.
var chatOptionKeys = func() []string {
	t := reflect.TypeOf(ChatOptions{})
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}()

// maxSystemPrompt bounds a chat's custom instructions (bytes).
const maxSystemPrompt = 64 << 10

// chatOptions decodes a session's options; members this version does not know are
// kept in the session untouched and ignored here. A damaged value reads as defaults.
func chatOptions(sess store.Session) ChatOptions {
	var o ChatOptions
	if sess.Options != "" {
		_ = json.Unmarshal([]byte(sess.Options), &o)
	}
	return o
}

// ChatOptionsError is returned by SetChatOptions for an invalid value; Field names it.
type ChatOptionsError struct{ Field, Message string }

func (e *ChatOptionsError) Error() string { return e.Message }

// GetChatOptions returns the options of session id. Errors: store.ErrNotFound.
func (area *SettingsArea) GetChatOptions(ctx context.Context, id string) (ChatOptions, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return ChatOptions{}, err
	}
	return chatOptions(sess), nil
}

// SetChatOptions replaces the options of session id with o; members of the stored
// object this version does not know are kept. The change applies from the chat's next
// turn. Errors: *ChatOptionsError for an invalid value; store.ErrNotFound.
func (area *SettingsArea) SetChatOptions(ctx context.Context, id string, o ChatOptions) (store.Session, error) {
	s := area.s
	if len(o.SystemPrompt) > maxSystemPrompt {
		return store.Session{}, &ChatOptionsError{Field: "system_prompt",
			Message: fmt.Sprintf("the custom instructions are %d KiB; shorten them to at most %d KiB", len(o.SystemPrompt)>>10, maxSystemPrompt>>10)}
	}
	for _, t := range o.Tools {
		if strings.TrimSpace(t) == "" || len(t) > 64 {
			return store.Session{}, &ChatOptionsError{Field: "tools", Message: fmt.Sprintf("%q is not a toolset name", t)}
		}
	}
	if o.ReasoningEffort != "" && !slices.Contains(protocol.ReasoningEfforts, o.ReasoningEffort) {
		return store.Session{}, &ChatOptionsError{Field: "reasoning_effort",
			Message: fmt.Sprintf("%q is not a reasoning effort: choose one of %s, or the provider's default", o.ReasoningEffort, strings.Join(protocol.ReasoningEfforts, ", "))}
	}
	if o.MaxOutputTokens < 0 || o.MaxOutputTokens > maxOutputTokensLimit {
		return store.Session{}, &ChatOptionsError{Field: "max_output_tokens",
			Message: "the answer limit is a number of tokens (e.g. 4096), or empty for the provider's default"}
	}
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return store.Session{}, err
	}
	// Replace this version's members, keep the others (written by a newer Talaria).
	merged := map[string]json.RawMessage{}
	_ = json.Unmarshal([]byte(sess.Options), &merged)
	for _, k := range chatOptionKeys {
		delete(merged, k)
	}
	add, _ := json.Marshal(o)
	var addKeys map[string]json.RawMessage
	_ = json.Unmarshal(add, &addKeys)
	for k, v := range addKeys {
		merged[k] = v
	}
	text, err := json.Marshal(merged)
	if err != nil {
		return store.Session{}, err
	}
	if err := s.Store.SetSessionOptions(ctx, id, store.JSONObject(text)); err != nil {
		return store.Session{}, err
	}
	s.core.SessionsChanged()
	return s.Store.GetSession(ctx, id)
}
