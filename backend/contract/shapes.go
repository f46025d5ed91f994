package contract

import (
	"reflect"

	"talaria/sidecar/protocol"
)

// Shape stands in for a type with its own JSON encoding (a MarshalJSON): As is a
// struct with the same JSON members, generated under the type's own name.
// TestShapesMatchTheirEncoding encodes each of Samples (values of the real type) and
// decodes the JSON strictly into As, so a shape that drifts from the encoding fails.
type Shape struct {
	Type    reflect.Type
	As      any
	Samples []any
}

// Shapes lists them.
var Shapes = []Shape{
	{Type: reflect.TypeOf(protocol.ChatMessage{}), As: ChatMessage{}, Samples: []any{
		protocol.ChatMessage{Role: protocol.RoleUser, Content: "hi"},
		protocol.ChatMessage{Role: protocol.RoleUser, Content: "look", Parts: []protocol.ContentPart{{Type: "text", Text: "look"}}},
		protocol.ChatMessage{Role: protocol.RoleAssistant, Reasoning: "r", ToolCalls: []protocol.ToolCall{{ID: "c", Type: "function"}}, Partial: true},
		protocol.ChatMessage{Role: protocol.RoleTool, ToolCallID: "c", Name: "terminal", Content: "ok"},
	}},
}

// ChatMessage is protocol.ChatMessage as it is encoded: Content is the text, or the
// content parts of a message that has them (text, image_url, image_file).
type ChatMessage struct {
	Role       string              `json:"role" ts:"Role"`
	Content    any                 `json:"content" ts:"string | Record<string, unknown>[]"`
	Reasoning  string              `json:"reasoning,omitempty"`
	ToolCalls  []protocol.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string              `json:"tool_call_id,omitempty"`
	Name       string              `json:"name,omitempty"`
	Partial    bool                `json:"partial,omitempty"`
}

func shapeOf(t reflect.Type) (reflect.Type, bool) {
	for _, s := range Shapes {
		if s.Type == t {
			return reflect.TypeOf(s.As), true
		}
	}
	return nil, false
}
