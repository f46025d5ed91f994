package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"talaria/sidecar/protocol"
)

// maxErrorBodyBytes bounds how much of an error response is read; maxMessageBytes how
// much of a raw (non-JSON) body goes into an error message.
const (
	maxErrorBodyBytes = 64 << 10
	maxMessageBytes   = 500
)

// endpoint is what error messages need to know about the provider being called.
type endpoint struct {
	name    string // provider name for messages
	url     string // base URL requests go to (no trailing slash)
	baseURL string // the base URL for messages and logs, its password redacted
	apiKey  string // only to redact it from messages
	model   string
	dialect string // dialectOpenAI, dialectOpenRouter or dialectGeneric (parts.go)
	images  bool   // the request carries images: a refusal of them gets its provider_code
}

// failure builds an application error (code -32000) with a condition.
func (e *endpoint) failure(condition, message string) *protocol.Error {
	return protocol.NewError(protocol.CodeApplication, condition, e.redact(message))
}

// redact removes the API key from text a provider echoed back.
func (e *endpoint) redact(s string) string {
	if len(e.apiKey) >= 6 {
		s = strings.ReplaceAll(s, e.apiKey, "[redacted]")
	}
	return s
}

// httpError maps a non-2xx response to an error (docs/protocol.md, "Provider errors"):
//
//   - 401, 403: credential_missing
//   - 404 mentioning a model, or 400 saying the model does not exist: model_not_found
//   - 429: rate_limited, with retry_after_s from Retry-After
//   - anything else: provider_error
//
// Every one carries http_status, the provider's message (error.message, an error
// string, message or detail of its JSON body, else the raw body trimmed to 500 bytes)
// and provider_code when the body named one.
func (e *endpoint) httpError(status int, header http.Header, body []byte) *protocol.Error {
	msg, code := providerMessage(body)
	if msg == "" || strings.HasPrefix(msg, "<") {
		// No body, or an HTML error page (a proxy's): its markup is no message.
		msg = http.StatusText(status)
	}
	var err *protocol.Error
	switch {
	case contextTooLong(msg, code+" "+errorType(body)):
		err = e.contextError(fmt.Sprintf("%s cannot take this conversation (HTTP %d): %s", e.name, status, sentence(msg)))
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		err = e.failure(protocol.CondCredentialMissing, fmt.Sprintf("%s refused the request (HTTP %d): %s Check the API key in Settings.", e.name, status, sentence(msg)))
	case status == http.StatusNotFound && (code == "model_not_found" || strings.Contains(strings.ToLower(msg), "model")),
		status == http.StatusBadRequest && modelMissing(msg, code):
		err = e.failure(protocol.CondModelNotFound, fmt.Sprintf("%s does not know the model %q (HTTP %d): %s", e.name, e.model, status, sentence(msg)))
	case status == http.StatusTooManyRequests:
		err = e.failure(protocol.CondRateLimited, fmt.Sprintf("%s is rate limiting requests (HTTP 429): %s", e.name, sentence(msg)))
	case status == http.StatusNotFound:
		err = e.failure(protocol.CondProviderError, fmt.Sprintf("%s answered HTTP 404 at %s: %s Check the base URL in Settings (it usually ends in /v1).", e.name, e.baseURL, sentence(msg)))
	default:
		err = e.failure(protocol.CondProviderError, fmt.Sprintf("%s answered HTTP %d: %s", e.name, status, sentence(msg)))
	}
	err.Data.HTTPStatus = status
	err.Data.ProviderCode = code
	if s, ok := retryAfter(header.Get("Retry-After"), time.Now()); ok {
		err.Data.RetryAfterSeconds = s
	}
	markImagesUnsupported(err, e.images)
	return err
}

// streamError maps an error object a provider sent inside a 200 response (mid-stream,
// in a JSON body, or as llama.cpp's "error:" event). It is classified by what it says
// (its code, type and message: context size, credentials, rate limit, model), never
// given an http_status it did not come with; a numeric code that is an HTTP status is
// returned as status, for the retry decision, and kept as provider_code.
func (e *endpoint) streamError(raw json.RawMessage) (err *protocol.Error, status int) {
	msg, code := errorObject(raw)
	if msg == "" {
		msg = "the provider reported an error without a message"
	}
	if n, cerr := strconv.Atoi(code); cerr == nil && n >= 400 && n <= 599 {
		status = n
	}
	typ := errorType(append(append([]byte(`{"error":`), raw...), '}'))
	lc := strings.ToLower(code + " " + typ)
	said := sentence(msg)
	switch {
	case contextTooLong(msg, lc):
		err = e.contextError(fmt.Sprintf("%s cannot take this conversation: %s", e.name, said))
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		strings.Contains(lc, "invalid_api_key") || strings.Contains(lc, "authentication") || strings.Contains(lc, "unauthorized"):
		err = e.failure(protocol.CondCredentialMissing, fmt.Sprintf("%s refused the request: %s Check the API key in Settings.", e.name, said))
	case status == http.StatusTooManyRequests || strings.Contains(lc, "rate_limit"):
		err = e.failure(protocol.CondRateLimited, fmt.Sprintf("%s is rate limiting requests: %s", e.name, said))
	case modelMissing(msg, code):
		err = e.failure(protocol.CondModelNotFound, fmt.Sprintf("%s does not know the model %q: %s", e.name, e.model, said))
	default:
		err = e.failure(protocol.CondProviderError, fmt.Sprintf("%s reported an error: %s", e.name, said))
	}
	err.Data.ProviderCode = code
	markImagesUnsupported(err, e.images)
	return err, status
}

// contextHint is what to do about a conversation longer than the model's context.
const contextHint = "The conversation is longer than this model's context window. Summarise the older messages (Summarise and continue) or start a new chat; or choose a model with a larger context window."

// contextError is a context_too_long error with its hint.
func (e *endpoint) contextError(message string) *protocol.Error {
	err := e.failure(protocol.CondContextTooLong, message)
	err.Data.Hint = contextHint
	return err
}

// contextTooLongRE matches what providers say when a prompt does not fit the model's
// context: OpenAI, vLLM, DeepSeek and OpenRouter ("This model's maximum context length
// is 8192 tokens"), llama.cpp ("request (9412 tokens) exceeds the available context
// size (8192 tokens)"), Ollama ("input length exceeds the context length"), LM Studio
// ("the model is loaded with context length of only 4096 tokens, which is not enough",
// "greater than the context length"), Groq ("Please reduce the length of the
// messages"), Anthropic ("prompt is too long"), Mistral ("too large for model with
// 32768 maximum context length"), Gemini ("The input token count (…) exceeds the
// maximum number of tokens allowed").
var contextTooLongRE = regexp.MustCompile(`(?i)maximum context length|context[ _-]?(length|size|window)[ _-]?(is )?exceeded|exceeds?[^\n]{0,40}\bcontext (size|length|window)|context length of only|greater than the context length|exceeded max context length|prompt is too long|too large for model with|input token count[^\n]{0,40}exceeds|reduce the length of the messages|context window is full`)

// contextTooLong reports whether a provider's error says the conversation does not fit
// the model's context (by its code or type, else its message).
func contextTooLong(msg, code string) bool {
	c := strings.ToLower(code)
	return strings.Contains(c, "context_length") || strings.Contains(c, "exceed_context") || strings.Contains(c, "context_window") ||
		contextTooLongRE.MatchString(msg)
}

// networkError maps a failure to get a response. Any dial failure on a loopback host
// (127.0.0.0/8, ::1, localhost, or the unspecified address) means the local server is
// not running: local_runtime_unavailable. Everything else is network_error.
func (e *endpoint) networkError(err error) *protocol.Error {
	host := ""
	if u, perr := url.Parse(e.url); perr == nil {
		host = u.Hostname()
	}
	if isLoopbackHost(host) && isDialError(err) {
		return e.failure(protocol.CondLocalRuntimeUnavailable, fmt.Sprintf(
			"Nothing is answering at %s (%s). Start the local model server (Ollama, llama.cpp, LM Studio) or fix the base URL in Settings.",
			e.baseURL, shortNetError(err)))
	}
	return e.failure(protocol.CondNetworkError, fmt.Sprintf("Could not reach %s at %s: %s", e.name, e.baseURL, sentence(shortNetError(err))))
}

// shortNetError drops the "Post \"url\": " prefix of a *url.Error.
func shortNetError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func isDialError(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// modelMissingRE matches provider messages saying a model does not exist, e.g. OpenAI's
// "The model `x` does not exist", Ollama's `model "x" not found, try pulling it first`,
// OpenRouter's "x is not a valid model ID".
var modelMissingRE = regexp.MustCompile(`(?i)model\b[^\n]{0,200}?\b(not found|does not exist|doesn't exist|not exist|is not supported|not a valid)|(unknown|invalid|no such|nonexistent) model|not a valid model`)

func modelMissing(msg, code string) bool {
	return code == "model_not_found" || modelMissingRE.MatchString(msg)
}

// providerMessage extracts a provider's error message and code from a body:
// {"error":{"message","code"|"type"}}, {"error":"text"}, {"message":...} or
// {"detail":...}; anything else is the raw body, trimmed.
func providerMessage(body []byte) (msg, code string) {
	if first := firstOfArray(body); first != nil {
		body = first // Gemini's OpenAI layer wraps its error body in an array
	}
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		if len(v.Error) > 0 && string(v.Error) != "null" {
			if msg, code = errorObject(v.Error); msg != "" {
				return msg, code
			}
		}
		if v.Message != "" {
			return trimMessage(v.Message), ""
		}
		var detail string
		if json.Unmarshal(v.Detail, &detail) == nil && detail != "" {
			return trimMessage(detail), ""
		}
	}
	return trimMessage(string(body)), ""
}

// firstOfArray returns the first element of a JSON array body, nil for anything else.
func firstOfArray(body []byte) []byte {
	var arr []json.RawMessage
	if len(body) == 0 || body[0] != '[' || json.Unmarshal(body, &arr) != nil || len(arr) == 0 {
		return nil
	}
	return arr[0]
}

// errorType returns the type member of an error body's error object (or of the body
// itself): llama.cpp's exceed_context_size_error, OpenAI's invalid_request_error.
func errorType(body []byte) string {
	if first := firstOfArray(body); first != nil {
		body = first
	}
	var v struct {
		Error json.RawMessage `json:"error"`
		Type  string          `json:"type"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	var obj struct {
		Type string `json:"type"`
	}
	if len(v.Error) > 0 && json.Unmarshal(v.Error, &obj) == nil && obj.Type != "" {
		return obj.Type
	}
	return v.Type
}

// errorObject reads an error member: an object with message and code (or type), or a
// plain string.
func errorObject(raw json.RawMessage) (msg, code string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return trimMessage(s), ""
	}
	var obj struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return trimMessage(string(raw)), ""
	}
	code = strings.Trim(string(obj.Code), `"`)
	if code == "" || code == "null" {
		code = obj.Type
	}
	return trimMessage(obj.Message), code
}

// sentence ends a message the provider wrote with one full stop, so text can follow it
// ("Invalid key." stays, "Bad Gateway" gets its period; never "..").
func sentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return msg
	}
	switch r, _ := utf8.DecodeLastRuneInString(msg); r {
	case '.', '!', '?', '…', '。':
		return msg
	}
	return msg + "."
}

// trimMessage collapses surrounding space and cuts to maxMessageBytes on a rune boundary.
func trimMessage(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxMessageBytes {
		return s
	}
	cut := maxMessageBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// retryAfter parses a Retry-After value, delay-seconds or an HTTP date, into seconds from
// now (never negative).
func retryAfter(v string, now time.Time) (float64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return max(s, 0), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(math.Ceil(t.Sub(now).Seconds()), 0), true
	}
	return 0, false
}
