package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"talaria/sidecar/protocol"
)

// Budgets of what a result shows, in bytes.
const (
	// MaxImageBytes is the largest image or audio block (decoded) a card is sent.
	MaxImageBytes = 1 << 20
	// MaxMediaTotal bounds all image and audio data of one result.
	MaxMediaTotal = 4 << 20
	// MaxTextBlock bounds one text block on a card.
	MaxTextBlock = 64 << 10
	// MaxModelText bounds the text the model reads of one result.
	MaxModelText = 128 << 10
	// maxStructured bounds a result's structuredContent on a card.
	maxStructured = 32 << 10
)

// Annotations returns a tool's hints with the MCP defaults applied (destructive and
// open-world unless the server says otherwise).
func Annotations(t *sdk.Tool) protocol.MCPAnnotations {
	a := protocol.MCPAnnotations{Destructive: true, OpenWorld: true}
	if t == nil || t.Annotations == nil {
		return a
	}
	ta := t.Annotations
	a.ReadOnly, a.Idempotent = ta.ReadOnlyHint, ta.IdempotentHint
	if ta.DestructiveHint != nil {
		a.Destructive = *ta.DestructiveHint
	}
	if ta.OpenWorldHint != nil {
		a.OpenWorld = *ta.OpenWorldHint
	}
	if a.ReadOnly {
		a.Destructive = false // destructive is meaningful only when not read-only (MCP spec)
	}
	return a
}

// Title is a tool's display name: its title, else its annotations' title, else "".
func Title(t *sdk.Tool) string {
	if t.Title != "" {
		return t.Title
	}
	if t.Annotations != nil {
		return t.Annotations.Title
	}
	return ""
}

// ToolInfo describes a tool for a report.
func ToolInfo(t *sdk.Tool) protocol.MCPToolInfo {
	info := protocol.MCPToolInfo{Name: t.Name, Title: Title(t), Description: trim(t.Description, 4000), Annotations: Annotations(t)}
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && len(b) <= 64<<10 {
			info.InputSchema = b
		}
	}
	return info
}

// Result is an MCP tool result converted for the runtime: Text is what the model
// reads, Card what the tool card shows, Preview the card's plain-text fallback.
type Result struct {
	Text    string
	Preview string
	Card    protocol.MCPToolResult
}

// ConvertResult converts a tools/call result of server's tool.
func ConvertResult(server, tool string, res *sdk.CallToolResult) Result {
	out := Result{Card: protocol.MCPToolResult{Server: server, Tool: tool, IsError: res.IsError, Content: []protocol.MCPContent{}}}
	budget := MaxMediaTotal
	var model, preview []string
	for _, c := range res.Content {
		mc := convert(c, &budget)
		if mc.Type == "" {
			continue
		}
		out.Card.Content = append(out.Card.Content, mc)
		model = append(model, describe(mc, c))
		if mc.Type == "text" {
			preview = append(preview, mc.Text)
		} else {
			preview = append(preview, describe(mc, nil))
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && string(b) != "null" {
			if len(b) <= maxStructured {
				out.Card.Structured = b
			}
			if len(model) == 0 {
				model = append(model, string(b))
				preview = append(preview, string(b))
			}
		}
	}
	out.Text = strings.Join(model, "\n")
	if out.Text == "" {
		out.Text = "(the tool returned no content)"
	}
	if len(out.Text) > MaxModelText {
		out.Text = trim(out.Text, MaxModelText) + fmt.Sprintf("\n[... %d more bytes of the result cut ...]", len(out.Text)-MaxModelText)
	}
	out.Preview = strings.Join(preview, "\n")
	return out
}

// ConvertContent converts one content block for a card (prompts, resources), within a
// media budget shared by the caller's blocks.
func ConvertContent(c sdk.Content, budget *int) protocol.MCPContent { return convert(c, budget) }

// ConvertResource converts one resource's contents for a card within budget.
func ConvertResource(r *sdk.ResourceContents, budget *int) protocol.MCPContent {
	if r == nil {
		return protocol.MCPContent{}
	}
	mc := protocol.MCPContent{Type: "resource", URI: r.URI, MIMEType: r.MIMEType}
	if r.Text != "" {
		mc.Text = trim(r.Text, MaxTextBlock)
		mc.Size = int64(len(r.Text))
		return mc
	}
	mc.Size = int64(len(r.Blob))
	media(&mc, r.Blob, budget)
	return mc
}

func convert(c sdk.Content, budget *int) protocol.MCPContent {
	switch x := c.(type) {
	case *sdk.TextContent:
		return protocol.MCPContent{Type: "text", Text: trim(x.Text, MaxTextBlock), Size: int64(len(x.Text))}
	case *sdk.ImageContent:
		mc := protocol.MCPContent{Type: "image", MIMEType: x.MIMEType, Size: int64(len(x.Data))}
		media(&mc, x.Data, budget)
		return mc
	case *sdk.AudioContent:
		mc := protocol.MCPContent{Type: "audio", MIMEType: x.MIMEType, Size: int64(len(x.Data))}
		media(&mc, x.Data, budget)
		return mc
	case *sdk.ResourceLink:
		mc := protocol.MCPContent{Type: "resource_link", URI: x.URI, Name: x.Name, Title: x.Title, Description: trim(x.Description, 2000), MIMEType: x.MIMEType}
		if x.Size != nil {
			mc.Size = *x.Size
		}
		return mc
	case *sdk.EmbeddedResource:
		return ConvertResource(x.Resource, budget)
	}
	return protocol.MCPContent{}
}

// media puts base64 data on a card block when it fits the budgets, else says why not.
func media(mc *protocol.MCPContent, data []byte, budget *int) {
	switch {
	case len(data) > MaxImageBytes:
		mc.Omitted = fmt.Sprintf("too large to show (%s; at most %s)", byteSize(int64(len(data))), byteSize(MaxImageBytes))
	case len(data) > *budget:
		mc.Omitted = "too much media in one result to show it all"
	case len(data) > 0:
		*budget -= len(data)
		mc.Data = base64.StdEncoding.EncodeToString(data)
	}
}

// describe is a block as the model reads it: text as is, media and links as a line
// saying what they are (the model cannot see images through a tool result).
func describe(mc protocol.MCPContent, c sdk.Content) string {
	switch mc.Type {
	case "text":
		if tc, ok := c.(*sdk.TextContent); ok {
			return tc.Text
		}
		return mc.Text
	case "image", "audio":
		return fmt.Sprintf("[%s %s, %s: shown to the user]", mc.Type, orUnknown(mc.MIMEType), byteSize(mc.Size))
	case "resource_link":
		s := fmt.Sprintf("[resource link: %s <%s>", orUnknown(firstNonEmpty(mc.Title, mc.Name)), mc.URI)
		if mc.MIMEType != "" {
			s += " " + mc.MIMEType
		}
		if mc.Description != "" {
			s += ": " + mc.Description
		}
		return s + "]"
	case "resource":
		if er, ok := c.(*sdk.EmbeddedResource); ok && er.Resource != nil && er.Resource.Text != "" {
			return fmt.Sprintf("[resource <%s>]\n%s", mc.URI, er.Resource.Text)
		}
		if mc.Text != "" {
			return fmt.Sprintf("[resource <%s>]\n%s", mc.URI, mc.Text)
		}
		return fmt.Sprintf("[resource <%s> %s, %s]", mc.URI, orUnknown(mc.MIMEType), byteSize(mc.Size))
	}
	return ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown type)"
	}
	return s
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
