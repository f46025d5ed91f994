package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestChatMessageContentIsAStringOrParts(t *testing.T) {
	plain, err := json.Marshal(ChatMessage{Role: "user", Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if string(plain) != `{"role":"user","content":"hi"}` {
		t.Errorf("plain message = %s", plain)
	}
	m := ChatMessage{Role: "user", Content: "ignored when parts are set", Parts: []ContentPart{
		TextPart("look"),
		{Type: PartImageURL, ImageURL: &ImageURL{URL: "data:image/png;base64,iVBORw0KGgo="}},
		{Type: PartImageFile, ImageFile: &ImageFile{Path: "/data/attachments/ab/abcd", MIMEType: "image/png", Name: "a.png", Size: 8}},
		TextPart(""),
	}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"image_file","image_file":{"path":"/data/attachments/ab/abcd","mime_type":"image/png","name":"a.png","size":8}},{"type":"text","text":""}]}`
	if string(b) != want {
		t.Errorf("parts message =\n%s\nwant\n%s", b, want)
	}
	var back ChatMessage
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Content != "look" || len(back.Parts) != 4 || back.Parts[2].ImageFile.Path != "/data/attachments/ab/abcd" {
		t.Errorf("decoded = %+v", back)
	}
	var null ChatMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"x","arguments":"{}"}}]}`), &null); err != nil {
		t.Fatal(err)
	}
	if null.Content != "" || len(null.ToolCalls) != 1 {
		t.Errorf("null content = %+v", null)
	}
	if err := json.Unmarshal([]byte(`{"role":"user","content":12}`), &null); err == nil {
		t.Error("a number as content was accepted")
	}
}

func TestChatStartUserMessageIsAStringOrParts(t *testing.T) {
	p := ChatStartParams{SessionID: "s", UserMessage: "hello", Model: "m"}
	b, _ := json.Marshal(p)
	if !strings.Contains(string(b), `"user_message":"hello"`) {
		t.Errorf("string user_message: %s", b)
	}
	p.UserParts = []ContentPart{TextPart("hello"), {Type: PartImageURL, ImageURL: &ImageURL{URL: "https://x/y.png", Detail: "low"}}}
	b, _ = json.Marshal(p)
	if !strings.Contains(string(b), `"user_message":[{"type":"text","text":"hello"},{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}}]`) {
		t.Errorf("parts user_message: %s", b)
	}
	if strings.Count(string(b), `"user_message"`) != 1 {
		t.Errorf("user_message twice: %s", b)
	}
	var back ChatStartParams
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.UserMessage != "hello" || len(back.UserParts) != 2 || back.SessionID != "s" || back.Model != "m" {
		t.Errorf("decoded = %+v", back)
	}
	if err := json.Unmarshal([]byte(`{"session_id":"s","user_message":"x"}`), &back); err != nil || back.UserParts != nil || back.UserMessage != "x" {
		t.Errorf("string decode = %+v, %v", back, err)
	}
}

func TestCheckParts(t *testing.T) {
	good := []ContentPart{TextPart("a"), {Type: PartImageFile, ImageFile: &ImageFile{Path: "/a/b", MIMEType: "image/jpeg"}}}
	if err := CheckParts(good); err != nil {
		t.Errorf("good parts: %v", err)
	}
	for name, bad := range map[string][]ContentPart{
		"unknown type":  {{Type: "audio"}},
		"no url":        {{Type: PartImageURL}},
		"relative path": {{Type: PartImageFile, ImageFile: &ImageFile{Path: "a/b", MIMEType: "image/png"}}},
		"not an image":  {{Type: PartImageFile, ImageFile: &ImageFile{Path: "/a/b", MIMEType: "text/plain"}}},
		"no image_file": {{Type: PartImageFile}},
	} {
		if err := CheckParts(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
