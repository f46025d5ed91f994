package builtin

import "strings"

// Reasoning written inline: open reasoning models (DeepSeek-R1 and its distills, Qwen3,
// QwQ, ...) served without a reasoning parser (llama.cpp's llama-server with
// --reasoning-format none, vLLM without --reasoning-parser, older Ollama and LM Studio)
// begin their answer's content with the reasoning between <think> and </think>, where
// a parser would have sent it as reasoning_content. thinkSplit takes it out of the
// answer as the stream arrives, so it is shown and kept as reasoning (never sent back
// to the model as part of the answer) and the answer is what follows the closing tag.
// Only a block that opens the answer (after white space) counts: a <think> later in
// the text is the answer's own.

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
	// thinkLead is the most white space held before the answer's first text while
	// deciding whether it opens with <think>; past it the answer is plain text.
	thinkLead = 256
)

type thinkState uint8

const (
	thinkUndecided thinkState = iota // the answer's first bytes: held until they decide
	thinkInside                      // between <think> and </think>: reasoning
	thinkAfter                       // after </think>: white space before the answer dropped
	thinkPlain                       // the answer
)

// thinkSplit splits a model call's content stream into reasoning and answer. The zero
// value is ready (a new one per model call). Not safe for concurrent use.
type thinkSplit struct {
	state  thinkState
	held   string // undecided bytes, or the end of the reasoning that may begin </think>
	opened bool   // the answer opened with <think>
}

// feed takes the next piece of content and returns what of it (with what was held) is
// now known to be reasoning and answer; bytes that may still turn out to be part of a
// tag are held until the next piece or flush.
func (k *thinkSplit) feed(text string) (reasoning, answer string) {
	switch k.state {
	case thinkPlain:
		return "", text
	case thinkAfter:
		rest := strings.TrimLeft(text, " \t\r\n")
		if rest == "" {
			return "", ""
		}
		k.state = thinkPlain
		return "", rest
	case thinkInside:
		return k.inside(k.held + text)
	}
	s := k.held + text
	lead := strings.TrimLeft(s, " \t\r\n")
	switch {
	case strings.HasPrefix(lead, thinkOpen):
		k.state, k.held, k.opened = thinkInside, "", true
		return k.inside(lead[len(thinkOpen):])
	case strings.HasPrefix(thinkOpen, lead) && len(s) <= thinkLead:
		k.held = s // white space, or the tag's beginning: not decided yet
		return "", ""
	}
	k.state, k.held = thinkPlain, ""
	return "", s
}

// inside handles s within the reasoning block: the reasoning up to </think> (the rest
// after it goes on as the answer), or all of s but a tail that may begin the tag.
func (k *thinkSplit) inside(s string) (reasoning, answer string) {
	if i := strings.Index(s, thinkClose); i >= 0 {
		k.state, k.held = thinkAfter, ""
		_, answer = k.feed(s[i+len(thinkClose):])
		return s[:i], answer
	}
	keep := 0
	for n := min(len(thinkClose)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, thinkClose[:n]) {
			keep = n
			break
		}
	}
	k.held = s[len(s)-keep:]
	return s[:len(s)-keep], ""
}

// flush ends the content stream: what was held is given back as what it was taken for
// (an undecided beginning is the answer; a tail inside the block is reasoning).
func (k *thinkSplit) flush() (reasoning, answer string) {
	held := k.held
	k.held = ""
	switch k.state {
	case thinkInside:
		return held, ""
	case thinkUndecided:
		k.state = thinkPlain
		return "", held
	}
	return "", ""
}

// splitThink separates a whole answer's inline reasoning block (aux.complete's title,
// a non-streamed answer): the reasoning and the answer after it.
func splitThink(text string) (reasoning, answer string) {
	var k thinkSplit
	r, a := k.feed(text)
	r2, a2 := k.flush()
	if !k.opened {
		if cr, ca, ok := closeOnly(a + a2); ok {
			return cr, ca
		}
	}
	return r + r2, a + a2
}

// closeOnly splits a whole answer that closes a reasoning block it never opened:
// models whose chat template opens the block itself (DeepSeek-R1 and its distills,
// QwQ: the prompt ends with "<think>\n") stream "reasoning</think>\n\nanswer" when
// served without a reasoning parser (llama.cpp's issue 11861, vLLM's 13125). It
// returns the reasoning and the answer after the tag (white space before it dropped),
// and ok false (the text is all answer) when there is no </think>, or when the text
// before it opens a <think> or is inside code (a ``` fence, or an odd number of `):
// there the tag is the answer's own. The answer streams as text until the call ends
// (the tag cannot be foreseen); the saved row and what goes back to the model are split.
func closeOnly(text string) (reasoning, answer string, ok bool) {
	i := strings.Index(text, thinkClose)
	if i < 0 {
		return "", text, false
	}
	before := text[:i]
	if strings.Contains(before, thinkOpen) || strings.Contains(before, "```") || strings.Count(before, "`")%2 == 1 {
		return "", text, false
	}
	return before, strings.TrimLeft(text[i+len(thinkClose):], " \t\r\n"), true
}
