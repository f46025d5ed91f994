package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Content parts (docs/protocol.md, "Content parts"). A message's content is either a
// string or a list of parts, as in OpenAI's chat-completions API
// (https://platform.openai.com/docs/api-reference/chat/create, "content parts"). In Go
// the text stays in ChatMessage.Content (and ChatStartParams.UserMessage), so code that
// only reads text keeps working; the parts, when there are any, travel beside it in
// Parts (UserParts) and are what the wire carries as "content" ("user_message").

// Content part types.
const (
	// PartText is {"type":"text","text":...}.
	PartText = "text"
	// PartImageURL is {"type":"image_url","image_url":{"url":...,"detail"?}}: a data:
	// or https: URL, sent to an OpenAI-compatible provider as it is.
	PartImageURL = "image_url"
	// PartImageFile is this protocol's extension {"type":"image_file","image_file":
	// {"path","mime_type","name","size","sha256"}}: an image the host stores in its
	// data folder. The runtime reads the file (a built-in runtime sends it to the
	// provider as an image_url part with a data: URL of exactly those bytes), so large
	// images never travel through the 16 MiB line.
	PartImageFile = "image_file"
)

// MaxImageFileBytes is the largest image_file a runtime reads: 20 MiB.
const MaxImageFileBytes = 20 << 20

// ContentPart is one part of a message's content. Exactly the member of its Type is
// set: Text for PartText, ImageURL for PartImageURL, ImageFile for PartImageFile.
type ContentPart struct {
	Type      string     `json:"type"`
	Text      string     `json:"text"`
	ImageURL  *ImageURL  `json:"image_url,omitempty"`
	ImageFile *ImageFile `json:"image_file,omitempty"`
}

// ImageURL is the image_url member of an image_url part (OpenAI's shape). Detail is
// "auto", "low" or "high"; "" leaves it out.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// ImageFile is the image_file member of an image_file part: Path is an absolute path
// the runtime may read (the host's attachment store), MIMEType its type (image/png,
// image/jpeg, image/gif, image/webp), Name the file name the user attached, Size its
// length in bytes and SHA256 its lowercase hex digest (the file's name in the store).
type ImageFile struct {
	Path     string `json:"path"`
	MIMEType string `json:"mime_type"`
	Name     string `json:"name,omitempty"`
	Size     int64  `json:"size,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
}

// marshal is json.Marshal without HTML escaping: a text part or a message keeps "<"
// and "&" as they are (the caller's encoder decides for the whole document).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// MarshalJSON writes the part in the provider's shape: a text part always has "text",
// an image part never does.
func (p ContentPart) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case PartText:
		return marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{p.Type, p.Text})
	default:
		return marshal(struct {
			Type      string     `json:"type"`
			Text      string     `json:"text,omitempty"`
			ImageURL  *ImageURL  `json:"image_url,omitempty"`
			ImageFile *ImageFile `json:"image_file,omitempty"`
		}{p.Type, p.Text, p.ImageURL, p.ImageFile})
	}
}

// TextPart returns a text part.
func TextPart(text string) ContentPart { return ContentPart{Type: PartText, Text: text} }

// PartsText joins the text parts of parts with a blank line between them: the text a
// reader of Content sees.
func PartsText(parts []ContentPart) string {
	var texts []string
	for _, p := range parts {
		if p.Type == PartText && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// HasImages reports whether parts hold an image part.
func HasImages(parts []ContentPart) bool {
	for _, p := range parts {
		if p.Type == PartImageURL || p.Type == PartImageFile {
			return true
		}
	}
	return false
}

// CheckParts validates content parts: known types, each with its member set (an
// image_file with an absolute path and an image MIME type). The error names the part.
func CheckParts(parts []ContentPart) error {
	for i, p := range parts {
		switch p.Type {
		case PartText:
		case PartImageURL:
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return fmt.Errorf("content part %d: an image_url part needs image_url.url", i)
			}
		case PartImageFile:
			f := p.ImageFile
			if f == nil || f.Path == "" {
				return fmt.Errorf("content part %d: an image_file part needs image_file.path", i)
			}
			if !isAbs(f.Path) {
				return fmt.Errorf("content part %d: image_file.path %q is not absolute", i, f.Path)
			}
			if !strings.HasPrefix(f.MIMEType, "image/") {
				return fmt.Errorf("content part %d: image_file.mime_type %q is not an image type", i, f.MIMEType)
			}
		default:
			return fmt.Errorf("content part %d: unknown type %q (want text, image_url or image_file)", i, p.Type)
		}
	}
	return nil
}

// ReadImageFile reads an image_file part's file for a runtime: at most
// MaxImageFileBytes, checked against SHA256 when it is given. The errors say what went
// wrong in words for the user (the file is gone, too large, changed on disk).
func ReadImageFile(f *ImageFile) ([]byte, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errors.New("the file is gone from the attachment store")
		}
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxImageFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxImageFileBytes {
		return nil, fmt.Errorf("it is larger than %d MiB", MaxImageFileBytes>>20)
	}
	if f.SHA256 != "" {
		sum := sha256.Sum256(data)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), f.SHA256) {
			return nil, errors.New("the stored file does not match its digest (it was changed on disk)")
		}
	}
	return data, nil
}

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || (len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/'))
}

// decodeContent reads a "content" (or "user_message") value: a string, null, or a
// list of parts. For a list it returns the parts and their text (PartsText).
func decodeContent(raw json.RawMessage) (string, []ContentPart, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '[' {
		var parts []ContentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", nil, err
		}
		return PartsText(parts), parts, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", nil, err
	}
	return s, nil, nil
}

// chatMessageWire is ChatMessage with its content as raw JSON.
type chatMessageWire struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Reasoning  string          `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
	Partial    bool            `json:"partial,omitempty"`
}

// MarshalJSON writes "content" as the parts when there are any, else as the string.
func (m ChatMessage) MarshalJSON() ([]byte, error) {
	var content any = m.Content
	if len(m.Parts) > 0 {
		content = m.Parts
	}
	c, err := marshal(content)
	if err != nil {
		return nil, err
	}
	return marshal(chatMessageWire{Role: m.Role, Content: c, Reasoning: m.Reasoning, ToolCalls: m.ToolCalls,
		ToolCallID: m.ToolCallID, Name: m.Name, Partial: m.Partial})
}

// UnmarshalJSON reads "content" as a string or a list of parts (then Parts holds them
// and Content their text).
func (m *ChatMessage) UnmarshalJSON(b []byte) error {
	var w chatMessageWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	text, parts, err := decodeContent(w.Content)
	if err != nil {
		return fmt.Errorf("content: %w", err)
	}
	*m = ChatMessage{Role: w.Role, Content: text, Parts: parts, Reasoning: w.Reasoning, ToolCalls: w.ToolCalls,
		ToolCallID: w.ToolCallID, Name: w.Name, Partial: w.Partial}
	return nil
}

// chatStartPlain is ChatStartParams without its methods, for the (un)marshalers.
type chatStartPlain ChatStartParams

// MarshalJSON writes "user_message" as the parts when there are any, else as the
// string.
func (p ChatStartParams) MarshalJSON() ([]byte, error) {
	if len(p.UserParts) == 0 {
		return json.Marshal(chatStartPlain(p))
	}
	return json.Marshal(struct {
		chatStartPlain
		UserMessage []ContentPart `json:"user_message"`
	}{chatStartPlain(p), p.UserParts})
}

// UnmarshalJSON reads "user_message" as a string or a list of parts (then UserParts
// holds them and UserMessage their text).
func (p *ChatStartParams) UnmarshalJSON(b []byte) error {
	var aux struct {
		chatStartPlain
		UserMessage json.RawMessage `json:"user_message"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	text, parts, err := decodeContent(aux.UserMessage)
	if err != nil {
		return fmt.Errorf("user_message: %w", err)
	}
	*p = ChatStartParams(aux.chatStartPlain)
	p.UserMessage, p.UserParts = text, parts
	return nil
}
