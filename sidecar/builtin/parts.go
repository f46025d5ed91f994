package builtin

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"talaria/sidecar/protocol"
)

// Content parts and per-provider request options of chat.start (docs/protocol.md,
// "Content parts" and "Per-chat request options").

// Provider dialects: how a request names the options that differ between providers.
const (
	dialectOpenAI     = "openai"     // api.openai.com: max_completion_tokens, reasoning_effort
	dialectOpenRouter = "openrouter" // openrouter.ai: max_tokens, reasoning {effort}
	dialectGeneric    = "generic"    // Ollama, llama.cpp, LM Studio, vLLM ...: max_tokens, reasoning_effort
)

// dialectOf picks the dialect from the provider's name (the Settings preset) or, for
// a custom name, from the base URL's host.
func dialectOf(name, baseURL string) string {
	host := ""
	if u, err := url.Parse(baseURL); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	switch {
	case strings.EqualFold(name, "openai") || host == "api.openai.com":
		return dialectOpenAI
	case strings.EqualFold(name, "openrouter") || host == "openrouter.ai" || strings.HasSuffix(host, ".openrouter.ai"):
		return dialectOpenRouter
	}
	return dialectGeneric
}

// applyOptions sets a request's answer bound and reasoning effort in the provider's
// words. OpenRouter has no "none" effort: it is sent as reasoning {enabled: false}.
func applyOptions(req *chatRequest, dialect string, maxOutput int, effort string) {
	if maxOutput > 0 {
		if dialect == dialectOpenAI {
			req.MaxCompletionTokens = maxOutput
		} else {
			req.MaxTokens = maxOutput
		}
	}
	if effort == "" {
		return
	}
	if dialect == dialectOpenRouter {
		if effort == protocol.ReasoningNone {
			off := false
			req.Reasoning = &reasoningOption{Enabled: &off}
		} else {
			req.Reasoning = &reasoningOption{Effort: effort}
		}
		return
	}
	req.ReasoningEffort = effort
}

// checkOptions validates chat.start's reasoning_effort and max_output_tokens.
func checkOptions(p protocol.ChatStartParams) error {
	if p.MaxOutputTokens < 0 {
		return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("max_output_tokens is %d: it must be positive (or 0 for the provider's default)", p.MaxOutputTokens))
	}
	if p.ReasoningEffort == "" {
		return nil
	}
	for _, e := range protocol.ReasoningEfforts {
		if p.ReasoningEffort == e {
			return nil
		}
	}
	return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
		fmt.Sprintf("reasoning_effort %q is not one of %s", p.ReasoningEffort, strings.Join(protocol.ReasoningEfforts, ", ")))
}

// wireContent is a message's content for the provider: its text, or with parts the
// parts with every image_file read and sent as an image_url part whose URL is
// data:<mime_type>;base64,<the file's bytes>. Errors: invalid_params naming the file
// when an image cannot be read, is too big, or does not match its digest.
func wireContent(text string, parts []protocol.ContentPart) (any, error) {
	if len(parts) == 0 {
		return text, nil
	}
	if err := protocol.CheckParts(parts); err != nil {
		return nil, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, err.Error())
	}
	out := make([]protocol.ContentPart, 0, len(parts))
	for _, p := range parts {
		if p.Type != protocol.PartImageFile {
			out = append(out, p)
			continue
		}
		url, err := imageDataURL(p.ImageFile)
		if err != nil {
			name := p.ImageFile.Name
			if name == "" {
				name = p.ImageFile.Path
			}
			return nil, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
				fmt.Sprintf("The attached image %q could not be sent: %v. Remove it and attach it again.", name, err))
		}
		out = append(out, protocol.ContentPart{Type: protocol.PartImageURL, ImageURL: &protocol.ImageURL{URL: url}})
	}
	return out, nil
}

// imageDataURL reads an image_file (protocol.ReadImageFile) into a data: URL.
func imageDataURL(f *protocol.ImageFile) (string, error) {
	data, err := protocol.ReadImageFile(f)
	if err != nil {
		return "", err
	}
	return "data:" + f.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(data), nil
}

// imagesUnsupportedRE matches a provider's words for "this model takes no images":
// OpenAI's "image_url is only supported by certain models", llama.cpp's "image input
// is not supported - hint: ... mmproj", LM Studio's "Model does not support images",
// Ollama's "does not support images" / "model is not a vision model".
var imagesUnsupportedRE = regexp.MustCompile(`(?i)(image|vision|multimodal|mmproj)[^\n]{0,80}?(not supported|unsupported|only supported|not enabled|not available)|(does ?n[o']t|cannot|can't|doesn't) (support|accept|handle|process) (images?|image inputs?|vision|multimodal)|not an? (vision|multimodal)`)

// ProviderCodeImagesUnsupported is the provider_code the runtime sets on a provider
// error that says the model takes no images (the request carried some).
const ProviderCodeImagesUnsupported = "image_input_unsupported"

// markImagesUnsupported sets provider_code image_input_unsupported on err when the
// request carried images and the provider's message says the model takes none.
func markImagesUnsupported(err *protocol.Error, hadImages bool) {
	if err == nil || err.Data == nil || !hadImages || err.Data.Condition == protocol.CondCredentialMissing ||
		err.Data.Condition == protocol.CondRateLimited {
		return
	}
	if imagesUnsupportedRE.MatchString(err.Message) {
		err.Data.Condition = protocol.CondProviderError
		err.Data.ProviderCode = ProviderCodeImagesUnsupported
	}
}
