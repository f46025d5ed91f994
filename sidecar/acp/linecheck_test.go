package acp

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
)

func TestCheckLines(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, tc := range []struct {
		name, in, out, reason string
	}{
		{"good lines pass, blank lines are dropped", good + "\n\n  \n" + good + "\r\n", good + "\n" + good + "\r\n", ""},
		{"a last line without a newline", good, good + "\n", ""},
		{"not JSON", good + "\nStarting server...\n" + good + "\n", good + "\n", "not JSON"},
		{"JSON that is not an object", "[1,2]\n", "", "not JSON"},
		{"an object without jsonrpc", `{"id":1,"result":{}}` + "\n", "", "JSON-RPC 2.0"},
		{"another jsonrpc version", `{"jsonrpc":"1.0","id":1}` + "\n", "", "JSON-RPC 2.0"},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"res` + "\n", "", "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := checkLines(strings.NewReader(tc.in), &out)
			var pe *ProtocolError
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if !errors.As(err, &pe) || !strings.Contains(pe.Error(), tc.reason) {
				t.Fatalf("err = %v, want a protocol error about %q", err, tc.reason)
			}
			if out.String() != tc.out {
				t.Fatalf("passed %q, want %q", out.String(), tc.out)
			}
		})
	}
	// A line over the limit is refused without being buffered whole.
	long := `{"jsonrpc":"2.0","x":"` + strings.Repeat("a", maxAgentLine) + `"}` + "\n"
	var pe *ProtocolError
	if err := checkLines(strings.NewReader(long), &bytes.Buffer{}); !errors.As(err, &pe) || !strings.Contains(pe.Reason, "longer") || len(pe.Line) > 200 {
		t.Fatalf("long line: %v", err)
	}
}

func TestPromptBlocks(t *testing.T) {
	dir := t.TempDir()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	path := dir + "/shot.png"
	if err := os.WriteFile(path, png, 0o600); err != nil {
		t.Fatal(err)
	}
	p := protocol.ChatStartParams{UserMessage: "look", UserParts: []protocol.ContentPart{
		protocol.TextPart("look"),
		{Type: protocol.PartImageFile, ImageFile: &protocol.ImageFile{Path: path, MIMEType: "image/png", Name: "shot.png"}},
		{Type: protocol.PartImageURL, ImageURL: &protocol.ImageURL{URL: "data:image/gif;base64,R0lGOD=="}},
		{Type: protocol.PartImageURL, ImageURL: &protocol.ImageURL{URL: "https://example.com/x.png"}},
	}}
	blocks, dropped := promptBlocks(p, true)
	if len(blocks) != 3 || blocks[0].Text.Text != "look" || blocks[1].Image.MimeType != "image/png" ||
		blocks[1].Image.Data != base64.StdEncoding.EncodeToString(png) || blocks[2].Image.Data != "R0lGOD==" {
		t.Fatalf("blocks %+v", blocks)
	}
	if len(dropped) != 1 || !strings.Contains(dropped[0], "web address") {
		t.Errorf("dropped %v", dropped)
	}
	blocks, dropped = promptBlocks(p, false)
	if len(blocks) != 1 || len(dropped) != 3 || !strings.Contains(dropped[0], "shot.png") {
		t.Errorf("without image support: %d blocks, dropped %v", len(blocks), dropped)
	}
}
