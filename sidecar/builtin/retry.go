package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"talaria/sidecar/protocol"
)

// Retrying a model call (docs/protocol.md, "Retries"): HTTP 429, HTTP 5xx (an HTTP
// status in the body of a 200 stream counts too) and a connection reset or cut before
// any byte of the answer are retried after a wait, at most len(RetryDelays) times, as
// long as nothing of the answer streamed.

// Defaults of the retry policy.
var DefaultRetryDelays = []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second}

// DefaultMaxRetryWait caps a wait the provider asks for; a longer one gives up at once.
const DefaultMaxRetryWait = 60 * time.Second

// retryKind says why a failed attempt may be retried.
type retryKind int

const (
	noRetry      retryKind = iota
	retryRate              // HTTP 429
	retryServer            // HTTP 5xx
	retryNetwork           // a reset or cut connection before any byte of the answer
)

// attemptError is the error of one HTTP attempt with what the retry logic needs: the
// response headers (Retry-After, rate-limit resets) and whether the connection broke.
// It unwraps to the *protocol.Error the caller sees.
type attemptError struct {
	err    *protocol.Error
	header http.Header
	reset  bool // the connection was reset or cut before an answer
	// status is the HTTP status an error object inside a 200 stream named as its code
	// (OpenRouter's {"error":{"code":429}}): retried like that status, though the
	// error claims no http_status.
	status int
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// retryKindOf classifies a failed attempt.
func retryKindOf(err error) (retryKind, http.Header) {
	var ae *attemptError
	var header http.Header
	if errors.As(err, &ae) {
		if ae.reset {
			return retryNetwork, nil
		}
		header = ae.header
	}
	var rpcErr *protocol.Error
	if !errors.As(err, &rpcErr) || rpcErr.Data == nil {
		return noRetry, nil
	}
	st := rpcErr.Data.HTTPStatus
	if ae != nil && ae.status != 0 {
		st = ae.status
	}
	switch {
	case st == http.StatusTooManyRequests:
		return retryRate, header
	case st >= 500 && st <= 599:
		return retryServer, header
	}
	return noRetry, nil
}

// isResetError reports whether a failure to get (or read the start of) an answer is a
// broken connection rather than a refused one: reset, aborted, broken pipe, or an end
// of file where the answer should have begun.
func isResetError(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// retryPlan is the decision about one failed attempt.
type retryPlan struct {
	kind      retryKind
	wait      time.Duration
	untilKind string // rate limits: protocol.UntilRetry or UntilReset
	// asked is the wait the provider asked for (Retry-After or a reset header), 0 when
	// it named none.
	asked time.Duration
}

// planRetry decides whether a failed attempt is retried: retries counts the retries
// already made. ok is false when the error is not retryable, the retries are used up,
// or the provider asks for a wait longer than maxWait (then plan.asked says how long).
func planRetry(err error, retries int, delays []time.Duration, maxWait time.Duration, now time.Time) (plan retryPlan, ok bool) {
	kind, header := retryKindOf(err)
	plan.kind = kind
	if kind == noRetry {
		return plan, false
	}
	ra, hasRA := retryAfter(header.Get("Retry-After"), now)
	if hasRA {
		plan.asked = time.Duration(ra * float64(time.Second))
	}
	if retries >= len(delays) {
		return plan, false
	}
	backoff := delays[retries]
	plan.wait, plan.untilKind = backoff, protocol.UntilRetry
	switch {
	case hasRA:
		plan.wait = plan.asked // honoured as given, 0 included
	case kind == retryRate:
		if reset, found := rateLimitReset(header, now); found {
			plan.asked = reset
			if reset >= backoff {
				plan.wait, plan.untilKind = reset, protocol.UntilReset
			}
		}
	}
	if plan.asked > maxWait {
		return plan, false
	}
	return plan, true
}

// Rate-limit reset headers: OpenAI, Groq and others send durations ("1s", "6m0s",
// "20ms"), some epoch seconds or milliseconds (OpenRouter's x-ratelimit-reset);
// Anthropic sends RFC 3339 times. The remaining-count header beside each says which
// limit ran out.
var resetHeaders = []struct{ reset, remaining string }{
	{"x-ratelimit-reset-requests", "x-ratelimit-remaining-requests"},
	{"x-ratelimit-reset-tokens", "x-ratelimit-remaining-tokens"},
	{"x-ratelimit-reset", "x-ratelimit-remaining"},
	{"anthropic-ratelimit-requests-reset", "anthropic-ratelimit-requests-remaining"},
	{"anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-tokens-remaining"},
	{"anthropic-ratelimit-input-tokens-reset", "anthropic-ratelimit-input-tokens-remaining"},
	{"anthropic-ratelimit-output-tokens-reset", "anthropic-ratelimit-output-tokens-remaining"},
}

// rateLimitReset reads the provider's reset headers: the latest reset of the limits
// whose remaining count is 0, or, when none says so, the earliest reset given.
func rateLimitReset(header http.Header, now time.Time) (time.Duration, bool) {
	var exhausted, any time.Duration
	foundExhausted, foundAny := false, false
	for _, h := range resetHeaders {
		d, ok := parseReset(header.Get(h.reset), now)
		if !ok {
			continue
		}
		if !foundAny || d < any {
			any = d
		}
		foundAny = true
		if n, err := strconv.ParseFloat(strings.TrimSpace(header.Get(h.remaining)), 64); err == nil && n <= 0 {
			if !foundExhausted || d > exhausted {
				exhausted = d
			}
			foundExhausted = true
		}
	}
	if foundExhausted {
		return exhausted, true
	}
	return any, foundAny
}

// parseReset reads one reset value as a wait from now (never negative): a Go-style
// duration ("1s", "6m0s", "2m59.56s", "20ms"), a number (seconds; above 1e9 epoch
// seconds, above 1e12 epoch milliseconds), or an RFC 3339 time.
func parseReset(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil {
		return max(d, 0), true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		switch {
		case f > 1e12:
			return max(time.UnixMilli(int64(f)).Sub(now), 0), true
		case f > 1e9:
			return max(time.Unix(0, int64(f*1e9)).Sub(now), 0), true
		case f >= 0:
			return time.Duration(f * float64(time.Second)), true
		}
		return 0, true
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// retryWait announces a retry and sleeps; it reports false when ctx ended first (at
// once: the sleep is a select on ctx).
func (t *turn) retryWait(ctx context.Context, err error, plan retryPlan, retry int) bool {
	until := time.Now().Add(plan.wait)
	of := fmt.Sprintf("retry %d of %d", retry, len(t.r.retryDelays))
	switch plan.kind {
	case retryRate:
		t.send(protocol.EvRateLimitWait, protocol.RateLimitWaitData{
			Provider: t.ep.name, Until: until.UnixMilli(), UntilKind: plan.untilKind,
		})
	case retryServer:
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningRetry,
			Message: fmt.Sprintf("%s; retrying in %s (%s).", strings.TrimSuffix(messageOf(err), "."), roundWait(plan.wait), of)})
	case retryNetwork:
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningRetry,
			Message: fmt.Sprintf("The connection to %s broke before it answered; retrying in %s (%s).", t.ep.name, roundWait(plan.wait), of)})
	}
	t.log.Info("model call retried", "kind", plan.kind, "wait", plan.wait, "retry", retry, "condition", conditionOf(err))
	timer := time.NewTimer(plan.wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		return false
	}
	if plan.kind == retryRate {
		// The wait is over: the provider is working again (the host's run_status).
		t.send(protocol.EvProviderPhase, protocol.ProviderPhaseData{})
	}
	return true
}

// gaveUp adds to a retryable error why it was not retried (again).
func (t *turn) gaveUp(err error, plan retryPlan, retries int) error {
	var rpcErr *protocol.Error
	if plan.kind == noRetry || !errors.As(err, &rpcErr) {
		return err
	}
	msg := strings.TrimSuffix(rpcErr.Message, ".")
	switch {
	case plan.asked > t.r.maxRetryWait:
		msg += fmt.Sprintf(" (it asks to wait %s, longer than the %s this app waits).", roundWait(plan.asked), roundWait(t.r.maxRetryWait))
	case retries > 0:
		msg += fmt.Sprintf(" (gave up after %d retries).", retries)
	default:
		return err
	}
	rpcErr.Message = msg
	if rpcErr.Data != nil && rpcErr.Data.RetryAfterSeconds == 0 && plan.asked > 0 {
		rpcErr.Data.RetryAfterSeconds = math.Ceil(plan.asked.Seconds())
	}
	return err
}

func messageOf(err error) string {
	var rpcErr *protocol.Error
	if errors.As(err, &rpcErr) {
		return rpcErr.Message
	}
	return err.Error()
}

// roundWait shows a wait the way a person reads it: "2 s", "250 ms", "1 min 30 s".
func roundWait(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(math.Ceil(d.Seconds())))
	}
	s := int(math.Ceil(d.Seconds()))
	if s%60 == 0 {
		return fmt.Sprintf("%d min", s/60)
	}
	return fmt.Sprintf("%d min %d s", s/60, s%60)
}
