package builtin

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// fastRetries are millisecond back-offs for tests.
var fastRetries = []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}

func rateLimited(header map[string]string, retryAfter string) providertest.Turn {
	return providertest.Turn{Status: 429, RetryAfter: retryAfter, Header: header,
		Body: `{"error":{"message":"Rate limit reached for requests","code":"rate_limit_exceeded"}}`}
}

// TestRetryRateLimitThenSuccess: a 429 is announced with rate_limit_wait (until from
// Retry-After or the reset headers), waited out, then the call is made again; the turn
// completes as if nothing happened.
func TestRetryRateLimitThenSuccess(t *testing.T) {
	tests := []struct {
		name      string
		turn      providertest.Turn
		untilKind string
		wait      time.Duration // what until should say, roughly
	}{
		{"retry-after seconds", rateLimited(nil, "0.15"), protocol.UntilRetry, 150 * time.Millisecond},
		{"openai reset headers", rateLimited(map[string]string{
			"x-ratelimit-reset-requests": "120ms", "x-ratelimit-remaining-requests": "0",
			"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-remaining-tokens": "40000"}, ""), protocol.UntilReset, 120 * time.Millisecond},
		{"no headers: back-off", rateLimited(nil, ""), protocol.UntilRetry, 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			p.Enqueue(tt.turn, providertest.TextTurn("Hello", " again"))
			rt := New(Options{Log: testLogger(t), RetryDelays: fastRetries})
			begin := time.Now()
			run := startChat(t, rt, chatParams(p.BaseURL()))
			res := run.mustResult()
			end := time.Now()
			took := end.Sub(begin)
			if res.Status != protocol.StatusCompleted || res.FinalResponse != "Hello again" || len(p.Requests()) != 2 {
				t.Fatalf("result %+v after %d requests", res, len(p.Requests()))
			}
			if got := strings.Join(run.events(), " "); got != "rate_limit_wait provider_phase token token" {
				t.Fatalf("frames: %s", got)
			}
			var w protocol.RateLimitWaitData
			run.waitFor(protocol.EvRateLimitWait, 1, &w)
			// Both sides in whole milliseconds, as on the wire: until is floor(now+wait)
			// for a now between begin and end (a slow machine only widens the window).
			if w.Provider != "Scripted" || w.UntilKind != tt.untilKind || w.Until < begin.Add(tt.wait).UnixMilli() || w.Until > end.Add(tt.wait).UnixMilli() {
				t.Fatalf("rate_limit_wait %+v (begin %v)", w, begin)
			}
			if took < tt.wait {
				t.Fatalf("retried after %v, the provider asked for %v", took, tt.wait)
			}
			if d := run.of(protocol.EvProviderPhase)[0]; string(d) != `{"phase":null}` {
				t.Fatalf("provider_phase %s", d)
			}
		})
	}
}

// TestRetryServerErrors: 5xx answers are retried with back-off, each announced by a
// warning of type retry; after len(RetryDelays) retries the last error is returned.
func TestRetryServerErrors(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t), RetryDelays: fastRetries})

	t.Run("then success", func(t *testing.T) {
		p.Enqueue(providertest.ErrorTurn(503, "overloaded"), providertest.Turn{Status: 502, Body: `{"error":"bad gateway"}`}, providertest.TextTurn("fine"))
		run := startChat(t, rt, chatParams(p.BaseURL()))
		res := run.mustResult()
		if res.FinalResponse != "fine" || rowsOf(res.Messages) != "assistant:fine" {
			t.Fatalf("result %+v", res)
		}
		var warns []protocol.WarningData
		for _, d := range run.of(protocol.EvWarning) {
			var w protocol.WarningData
			json.Unmarshal(d, &w) //nolint:errcheck
			warns = append(warns, w)
		}
		if len(warns) != 2 || warns[0].Type != protocol.WarningRetry || !strings.Contains(warns[0].Message, "HTTP 503") ||
			!strings.Contains(warns[0].Message, "retry 1 of 3") || !strings.Contains(warns[1].Message, "bad gateway") {
			t.Fatalf("warnings %+v", warns)
		}
	})
	t.Run("gives up", func(t *testing.T) {
		before := len(p.Requests())
		for i := 0; i < 4; i++ {
			p.Enqueue(providertest.ErrorTurn(500, "boom"))
		}
		run := startChat(t, rt, chatParams(p.BaseURL()))
		_, err := run.result()
		var rpcErr *protocol.Error
		if !errors.As(err, &rpcErr) || rpcErr.Condition() != protocol.CondProviderError || rpcErr.Data.HTTPStatus != 500 ||
			!strings.Contains(rpcErr.Message, "gave up after 3 retries") {
			t.Fatalf("error %v", err)
		}
		if n := len(p.Requests()) - before; n != 4 || len(run.of(protocol.EvWarning)) != 3 {
			t.Fatalf("%d requests, %d warnings", n, len(run.of(protocol.EvWarning)))
		}
	})
}

// TestRetryGivesUpBeyondTheCap: a provider that asks for a wait longer than
// MaxRetryWait gets no retry: rate_limited at once, with retry_after_s.
func TestRetryGivesUpBeyondTheCap(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t), RetryDelays: fastRetries, MaxRetryWait: 30 * time.Second})
	tests := []struct {
		name string
		turn providertest.Turn
		secs float64
	}{
		{"retry-after", rateLimited(nil, "120"), 120},
		{"reset header", rateLimited(map[string]string{"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-remaining-tokens": "0"}, ""), 360},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(p.Requests())
			p.Enqueue(tt.turn)
			begin := time.Now()
			run := startChat(t, rt, chatParams(p.BaseURL()))
			_, err := run.result()
			var rpcErr *protocol.Error
			if !errors.As(err, &rpcErr) || rpcErr.Condition() != protocol.CondRateLimited || rpcErr.Data.RetryAfterSeconds != tt.secs ||
				!strings.Contains(rpcErr.Message, "longer than the 30 s") {
				t.Fatalf("error %v %+v", err, rpcErr.Data)
			}
			// Every wait is announced (rate_limit_wait) and every retry is a request; and
			// the wait asked for (minutes) was not waited out.
			if len(run.of(protocol.EvRateLimitWait)) != 0 || len(p.Requests())-before != 1 || time.Since(begin) >= time.Duration(tt.secs)*time.Second {
				t.Fatalf("it waited or retried: frames %s, %d requests", run.summary(), len(p.Requests())-before)
			}
		})
	}
}

// TestRetryResets: a connection closed before any byte of the answer is retried; one
// cut after text streamed is not (the error carries the partial text).
func TestRetryResets(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t), RetryDelays: fastRetries})
	p.Enqueue(providertest.Turn{Drop: true}, providertest.Turn{Abort: true}, providertest.TextTurn("made it"))
	run := startChat(t, rt, chatParams(p.BaseURL()))
	if res := run.mustResult(); res.FinalResponse != "made it" || len(run.of(protocol.EvWarning)) != 2 {
		t.Fatalf("result %+v; frames %s", res, run.summary())
	}
	if w := string(run.of(protocol.EvWarning)[0]); !strings.Contains(w, "broke before it answered") {
		t.Fatalf("warning %s", w)
	}

	before := len(p.Requests())
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "cut "}}, Abort: true}, providertest.TextTurn("not asked"))
	_, err := startChat(t, rt, chatParams(p.BaseURL())).result()
	var rpcErr *protocol.Error
	if !errors.As(err, &rpcErr) || rpcErr.Data.Partial != "cut " || len(p.Requests())-before != 1 {
		t.Fatalf("error %v after %d requests", err, len(p.Requests())-before)
	}
}

// TestRetryTakesSteersAtTheRetriedCall: a steer sent during a rate-limit wait is read
// by the retried call (each attempt takes the queue).
func TestRetryTakesSteersAtTheRetriedCall(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{Log: testLogger(t), RetryDelays: fastRetries})
	p.Enqueue(rateLimited(nil, "0.3"), providertest.TextTurn("ok"))
	params := chatParams(p.BaseURL())
	run := startChat(t, rt, params)
	run.waitFor(protocol.EvRateLimitWait, 1, nil)
	if r := steer(t, rt, params.StreamID, "s", "meanwhile"); !r.Accepted || r.CanRedirect {
		t.Fatalf("steer in a wait = %+v", r)
	}
	if now, _ := rt.SteerNow(protocol.SteerRefParams{StreamID: params.StreamID, SteerID: "s"}); now.Delivery != "steer" {
		t.Fatalf("steer_now in a wait = %+v", now)
	}
	res := run.mustResult()
	if got := rowsOf(res.Messages); got != "user:meanwhile | assistant:ok" {
		t.Fatalf("rows %s", got)
	}
	reqs := p.Requests()
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Content != "meanwhile" {
		t.Fatalf("retried call ended with %+v", last)
	}
}

// TestNoRetriesOption: an empty RetryDelays turns retries off.
func TestNoRetriesOption(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.ErrorTurn(503, "down"), providertest.TextTurn("never"))
	_, err := New(Options{RetryDelays: []time.Duration{}}).Chat(t.Context(), chatParams(p.BaseURL()), newRecorder().emit)
	var rpcErr *protocol.Error
	if !errors.As(err, &rpcErr) || rpcErr.Data.HTTPStatus != 503 || strings.Contains(rpcErr.Message, "gave up") || len(p.Requests()) != 1 {
		t.Fatalf("error %v", err)
	}
}

func TestPlanRetry(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	delays := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	httpErr := func(status int, h map[string]string) error {
		header := http.Header{}
		for k, v := range h {
			header.Set(k, v)
		}
		e := protocol.NewError(0, protocol.CondProviderError, "x")
		e.Data.HTTPStatus = status
		return &attemptError{err: e, header: header}
	}
	tests := []struct {
		name      string
		err       error
		retries   int
		ok        bool
		kind      retryKind
		wait      time.Duration
		untilKind string
	}{
		{"429 back-off", httpErr(429, nil), 1, true, retryRate, 2 * time.Second, protocol.UntilRetry},
		{"429 retry-after", httpErr(429, map[string]string{"Retry-After": "7"}), 0, true, retryRate, 7 * time.Second, protocol.UntilRetry},
		{"429 retry-after 0", httpErr(429, map[string]string{"Retry-After": "0"}), 0, true, retryRate, 0, protocol.UntilRetry},
		{"429 retry-after date", httpErr(429, map[string]string{"Retry-After": now.Add(20 * time.Second).Format(http.TimeFormat)}), 0, true, retryRate, 20 * time.Second, protocol.UntilRetry},
		{"429 retry-after beyond the cap", httpErr(429, map[string]string{"Retry-After": "61"}), 0, false, retryRate, 0, ""},
		{"429 exhausted limit reset", httpErr(429, map[string]string{"x-ratelimit-reset-tokens": "6s", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-requests": "1s"}), 0, true, retryRate, 6 * time.Second, protocol.UntilReset},
		{"429 earliest reset when none says exhausted", httpErr(429, map[string]string{"x-ratelimit-reset-tokens": "30s", "x-ratelimit-reset-requests": "3s"}), 0, true, retryRate, 3 * time.Second, protocol.UntilReset},
		{"429 reset shorter than back-off", httpErr(429, map[string]string{"x-ratelimit-reset-requests": "20ms"}), 2, true, retryRate, 4 * time.Second, protocol.UntilRetry},
		{"429 epoch reset", httpErr(429, map[string]string{"x-ratelimit-reset": "1740830410"}), 0, true, retryRate, 10 * time.Second, protocol.UntilReset},
		{"429 epoch ms reset", httpErr(429, map[string]string{"x-ratelimit-reset": "1740830415000"}), 0, true, retryRate, 15 * time.Second, protocol.UntilReset},
		{"429 anthropic reset", httpErr(429, map[string]string{"anthropic-ratelimit-requests-reset": "2025-03-01T12:00:08Z", "anthropic-ratelimit-requests-remaining": "0"}), 0, true, retryRate, 8 * time.Second, protocol.UntilReset},
		{"429 used up", httpErr(429, nil), 3, false, retryRate, 0, ""},
		{"503", httpErr(503, nil), 0, true, retryServer, time.Second, protocol.UntilRetry},
		{"503 retry-after", httpErr(503, map[string]string{"Retry-After": "3"}), 0, true, retryServer, 3 * time.Second, protocol.UntilRetry},
		{"529", httpErr(529, nil), 2, true, retryServer, 4 * time.Second, protocol.UntilRetry},
		{"400", httpErr(400, nil), 0, false, noRetry, 0, ""},
		{"401", httpErr(401, map[string]string{"Retry-After": "1"}), 0, false, noRetry, 0, ""},
		{"reset", &attemptError{err: protocol.NewError(0, protocol.CondProviderError, "x"), reset: true}, 0, true, retryNetwork, time.Second, protocol.UntilRetry},
		{"mid-stream 429 (no headers)", func() error {
			e := protocol.NewError(0, protocol.CondRateLimited, "x")
			e.Data.HTTPStatus = 429
			return e
		}(), 0, true, retryRate, time.Second, protocol.UntilRetry},
		{"not a protocol error", errors.New("x"), 0, false, noRetry, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, ok := planRetry(tt.err, tt.retries, delays, DefaultMaxRetryWait, now)
			if ok != tt.ok || plan.kind != tt.kind || (ok && (plan.wait != tt.wait || plan.untilKind != tt.untilKind)) {
				t.Fatalf("planRetry = %+v, %v; want ok %v kind %v wait %v %s", plan, ok, tt.ok, tt.kind, tt.wait, tt.untilKind)
			}
		})
	}
}

func TestParseReset(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1s", time.Second, true}, {"6m0s", 6 * time.Minute, true}, {"2m59.56s", 2*time.Minute + 59560*time.Millisecond, true},
		{"20ms", 20 * time.Millisecond, true}, {"30", 30 * time.Second, true}, {"1.5", 1500 * time.Millisecond, true},
		{"1700000030", 30 * time.Second, true}, {"1700000030000", 30 * time.Second, true}, {"1699999990", 0, true},
		{"2023-11-14T22:13:40Z", 20 * time.Second, true}, {"", 0, false}, {"soon", 0, false}, {"NaN", 0, false}, {"-5s", 0, true},
	}
	for _, tt := range tests {
		got, ok := parseReset(tt.in, now)
		if ok != tt.ok || math.Abs(float64(got-tt.want)) > float64(time.Millisecond) {
			t.Errorf("parseReset(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
