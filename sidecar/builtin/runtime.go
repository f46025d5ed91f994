// Package builtin is the sidecar's built-in agent runtime: it talks to any
// OpenAI-compatible chat-completions endpoint (Ollama, llama.cpp server, LM Studio,
// vLLM, OpenAI, OpenRouter), runs the tool-calling loop with its tools (terminal, file
// tools, todo, clarify, request_secret), asks approval for dangerous commands, takes
// the user's steers between model calls, retries rate-limited and failed calls, and
// serves chat.start, chat.steer, chat.steer_withdraw, chat.steer_now, aux.complete,
// approval.respond, approval.yolo, clarify.respond and chat.evict (docs/protocol.md).
package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/mcp"
	"talaria/sidecar/protocol"
	"talaria/sidecar/protocol/redact"
	"talaria/sidecar/sandbox"
	"talaria/sidecar/server"
)

// RuntimeName is rpc.hello's runtime for this package.
const RuntimeName = protocol.RuntimeBuiltin

// AgentVersion is rpc.hello's agent_version: the version of this runtime's agent loop.
const AgentVersion = "0.3.0"

// Options configure a Runtime.
type Options struct {
	// Log receives the runtime's logs (default: discard). Info level never carries
	// message text or API keys.
	Log *slog.Logger
	// HTTPClient makes the provider requests (default: a client with a 10 s connect
	// timeout and no overall timeout, since a stream lasts as long as the answer).
	HTTPClient *http.Client
	// OutputLimit bounds the output of one terminal command kept for the model, in
	// bytes (default tools.DefaultOutputLimit, 64 KiB).
	OutputLimit int
	// RetryDelays are the back-off waits before the first, second ... retry of a model
	// call that failed with HTTP 429, 5xx or a connection reset before any answer; their
	// number is the most retries made. nil means DefaultRetryDelays (1 s, 2 s, 4 s); an
	// empty, non-nil slice turns retries off. A Retry-After or rate-limit reset header
	// replaces the back-off.
	RetryDelays []time.Duration
	// MaxRetryWait is the longest wait a provider may ask for (Retry-After, reset
	// headers) before the runtime gives up instead (default DefaultMaxRetryWait, 60 s).
	MaxRetryWait time.Duration
	// SandboxStatus says whether commands can be confined (default sandbox.Check). When
	// it says no, every command asks before it runs unconfined.
	SandboxStatus func() sandbox.Status
	// StreamIdleTimeout ends a model call whose stream sent nothing for this long when
	// chat.start gives no stream_idle_timeout_s (default 120 s).
	StreamIdleTimeout time.Duration
	// MCP keeps the running MCP servers (default: a new mcp.Manager, closed with the
	// runtime).
	MCP *mcp.Manager
}

// Runtime is the built-in runtime. It is safe for concurrent use. Its memory per
// session (todo list, secrets, approval grants, YOLO) lives until the process ends or
// chat.evict drops it.
type Runtime struct {
	log           *slog.Logger
	http          *http.Client
	outputLimit   int
	retryDelays   []time.Duration
	maxRetryWait  time.Duration
	idleTimeout   time.Duration
	sandboxStatus func() sandbox.Status

	mu       sync.Mutex
	sessions map[string]*session
	pending  map[string]*waiter
	streams  map[string]*turn // running chat.start calls by stream_id, for steering
	redact   *tools.Redactor
	// What the runtime knows of secrets besides the sessions' vault answers: API keys it
	// was sent, and the host's fingerprint key and fingerprints.
	apiKeys map[string]bool
	fpKey   []byte
	fps     []redact.Fingerprint
	fpSeen  map[string]bool
	// mcpSecrets are the secret values of MCP servers' settings seen so far (tokens in
	// their environment or headers), redacted like vault secrets.
	mcpSecrets map[string]bool

	mcp *mcp.Manager // the MCP client (mcptools.go)

	// idleTimer arms a model call's idle timeout (time.AfterFunc; tests put a timer of
	// their own here to decide when the stream counts as silent).
	idleTimer func(d time.Duration, f func()) idleWatch
}

// idleWatch is the idle timeout of one model call: pushed back by every byte read.
type idleWatch interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// New returns a Runtime.
func New(opts Options) *Runtime {
	r := &Runtime{log: opts.Log, http: opts.HTTPClient, outputLimit: opts.OutputLimit,
		retryDelays: opts.RetryDelays, maxRetryWait: opts.MaxRetryWait, idleTimeout: opts.StreamIdleTimeout, sandboxStatus: opts.SandboxStatus,
		sessions: map[string]*session{}, pending: map[string]*waiter{}, streams: map[string]*turn{}, redact: tools.NewRedactor(),
		mcpSecrets: map[string]bool{}, mcp: opts.MCP,
		apiKeys: map[string]bool{}, fpSeen: map[string]bool{},
		idleTimer: func(d time.Duration, f func()) idleWatch { return time.AfterFunc(d, f) }}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.sandboxStatus == nil {
		r.sandboxStatus = sandbox.Check
	}
	if r.retryDelays == nil {
		r.retryDelays = DefaultRetryDelays
	}
	if r.maxRetryWait <= 0 {
		r.maxRetryWait = DefaultMaxRetryWait
	}
	if r.http == nil {
		r.http = defaultHTTPClient()
	}
	if r.mcp == nil {
		r.mcp = mcp.NewManager(mcp.Options{Log: r.log.With("component", "mcp"), ClientVersion: AgentVersion})
	}
	return r
}

// Close stops every MCP server the runtime started (server.Serve calls it after the
// drain).
func (r *Runtime) Close() error { return r.mcp.Close() }

func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 10 * time.Second
	tr.MaxIdleConnsPerHost = 4
	return &http.Client{Transport: tr}
}

// Info implements server.Runtime.
func (r *Runtime) Info() server.Info {
	st := r.sandboxStatus()
	return server.Info{Name: RuntimeName, AgentVersion: AgentVersion,
		Features: []string{protocol.FeatureImages, protocol.FeatureMaxOutputTokens, protocol.FeatureReasoningEffort},
		Sandbox: &protocol.SandboxStatus{
			Available: st.Available, Mechanism: st.Mechanism, Reason: st.Reason, Hint: st.Hint}}
}

// Methods implements server.Runtime: chat.start, aux.complete, the steering methods
// (chat.steer, chat.steer_withdraw, chat.steer_now) and the answer methods
// (approval.respond, approval.yolo, clarify.respond, chat.evict).
func (r *Runtime) Methods() map[string]server.Handler {
	m := r.answerMethods()
	for name, h := range r.steerMethods() {
		m[name] = h
	}
	for name, h := range r.mcpMethods() {
		m[name] = h
	}
	for name, h := range map[string]server.Handler{
		protocol.MethodChatStart: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.ChatStartParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			return r.Chat(ctx, p, call.Emit)
		},
		protocol.MethodAuxComplete: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.AuxCompleteParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			return r.Complete(ctx, p)
		},
	} {
		m[name] = h
	}
	return m
}

// newEndpoint validates the model and provider of a call. Errors: invalid_params (code
// -32602) when the model or base URL is missing or the base URL is not http(s).
func newEndpoint(model string, p protocol.Provider) (*endpoint, error) {
	model = strings.TrimSpace(model)
	base := strings.TrimRight(strings.TrimSpace(p.BaseURL), "/")
	if base == "" {
		return nil, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			"No base URL is set for the provider: set it in Settings (e.g. http://127.0.0.1:11434/v1 for Ollama).")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("The provider base URL %q is not an http(s) URL: set it in Settings.", p.BaseURL))
	}
	if model == "" {
		return nil, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			"No model is set: choose one in Settings.")
	}
	name := strings.TrimSpace(p.Name)
	if name == "" {
		name = u.Host
	}
	// Messages and logs show the URL without any user:password it may carry.
	return &endpoint{name: name, url: base, baseURL: u.Redacted(), apiKey: p.APIKey, model: model, dialect: dialectOf(p.Name, base)}, nil
}

// post sends body to {base_url}/chat/completions. A non-2xx status or a network
// failure comes back as an *attemptError wrapping the *protocol.Error (see
// endpoint.httpError, networkError) with the response headers; a context error is
// returned as is.
func (r *Runtime) post(ctx context.Context, ep *endpoint, body *chatRequest) (*http.Response, error) {
	// Text goes as it is (no \u003c for <): what the user wrote and attached, exactly.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		return nil, ep.failure(protocol.CondProviderError, "bad request URL: "+err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "talaria-sidecar/"+AgentVersion)
	if body.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if ep.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+ep.apiKey)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &attemptError{err: ep.networkError(err), reset: !isDialError(err) && isResetError(err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
		if rerr != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &attemptError{err: ep.httpError(resp.StatusCode, resp.Header, data), header: resp.Header}
	}
	return resp, nil
}

// Complete runs aux.complete: one non-streaming completion of p.Messages. It returns
// {text}. Errors: invalid_params, the provider errors of chat.start (without partial),
// or the context's error when cancelled (the server reports condition cancelled).
func (r *Runtime) Complete(ctx context.Context, p protocol.AuxCompleteParams) (protocol.AuxCompleteResult, error) {
	ep, err := newEndpoint(p.Model, p.Provider)
	if err != nil {
		return protocol.AuxCompleteResult{}, err
	}
	msgs := make([]wireMessage, 0, len(p.Messages))
	for _, m := range p.Messages {
		msgs = append(msgs, toWire(m))
	}
	start := time.Now()
	req := &chatRequest{Model: ep.model, Messages: msgs}
	applyOptions(req, ep.dialect, p.MaxTokens, "")
	resp, err := r.post(ctx, ep, req)
	if err != nil {
		r.log.Info("aux.complete failed", "task", p.Task, "provider", ep.name, "model", ep.model, "err", conditionOf(err))
		return protocol.AuxCompleteResult{}, plainError(err)
	}
	defer resp.Body.Close()
	var body completionResponse
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		if ctx.Err() != nil {
			return protocol.AuxCompleteResult{}, ctx.Err()
		}
		return protocol.AuxCompleteResult{}, ep.failure(protocol.CondStreamInterrupted, fmt.Sprintf("The connection to %s broke while it answered: %s", ep.name, sentence(shortNetError(err))))
	}
	if err := json.Unmarshal(data, &body); err != nil {
		msg, _ := providerMessage(data)
		return protocol.AuxCompleteResult{}, ep.failure(protocol.CondProviderError, fmt.Sprintf("%s sent an answer that is not a chat completion: %s", ep.name, sentence(msg)))
	}
	if len(body.Error) > 0 && string(body.Error) != "null" {
		err, _ := ep.streamError(body.Error)
		return protocol.AuxCompleteResult{}, err
	}
	if len(body.Choices) == 0 {
		return protocol.AuxCompleteResult{}, ep.failure(protocol.CondProviderError, ep.name+" sent an answer without choices.")
	}
	// A reasoning model writing its reasoning inline (think.go): only the answer is the text.
	_, text := splitThink(string(body.Choices[0].Message.Content))
	r.log.Info("aux.complete done", "task", p.Task, "provider", ep.name, "model", ep.model, "chars", len(text), "took", time.Since(start).Round(time.Millisecond))
	return protocol.AuxCompleteResult{Text: text}, nil
}

// plainError returns the *protocol.Error inside err (dropping an attemptError's
// wrapper), or err itself.
func plainError(err error) error {
	var rpcErr *protocol.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	return err
}

func conditionOf(err error) string {
	var rpcErr *protocol.Error
	if errors.As(err, &rpcErr) {
		return rpcErr.Condition()
	}
	return err.Error()
}
