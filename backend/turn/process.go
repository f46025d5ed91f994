package turn

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/protocol/redact"
)

// frameQueue is an unbounded FIFO between the client's reader goroutine (push must
// never block it) and the run's processor.
type frameQueue struct {
	mu     sync.Mutex
	items  []protocol.FrameParams
	signal chan struct{}
	closed bool
}

func newFrameQueue() *frameQueue { return &frameQueue{signal: make(chan struct{}, 1)} }

func (q *frameQueue) push(f protocol.FrameParams) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, f)
	}
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *frameQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take returns the queued frames and whether the queue is closed.
func (q *frameQueue) take(buf []protocol.FrameParams) ([]protocol.FrameParams, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	buf = append(buf[:0], q.items...)
	clear(q.items)
	q.items = q.items[:0]
	return buf, q.closed
}

// HoldQuiet is how long text held back for secrets known only by fingerprint waits
// for more text before it is shown anyway: 1 s.
const HoldQuiet = time.Second

// process consumes the run's sidecar frames until the queue closes and is empty.
// Text deltas (token, reasoning) are joined and sent at most once per coalescing
// window; any other frame first flushes the pending text so order is kept.
func (r *Runner) process(rn *run, q *frameQueue) {
	window := r.Coalesce
	if window <= 0 {
		window = DefaultCoalesce
	}
	var (
		pendingEvent string
		pending      []byte // joined text, JSON-escaped later
		stream       redact.Stream
		quiet        *time.Timer
		quietC       <-chan time.Time
		lastFlush    time.Time
		timer        *time.Timer
		timerC       <-chan time.Time
		buf          []protocol.FrameParams
	)
	secrets := func() *redact.Set {
		if r.Secrets == nil {
			return nil
		}
		return r.Secrets()
	}
	// flush sends the pending text. The text goes through one redaction stream per run
	// of deltas, which holds back a short tail that could be the start of a secret; end
	// (another kind of frame, the other text event, the end of the stream) sends the
	// tail too. What is sent is what is journaled, so replay equals live.
	flush := func(end bool) {
		if pendingEvent == "" {
			return
		}
		set := secrets()
		text := stream.Push(set, string(pending))
		if end {
			text += stream.Flush(set)
		}
		pending = pending[:0]
		if text != "" {
			raw, _ := json.Marshal(protocol.TextData{Text: text})
			r.emitRaw(rn, pendingEvent, raw)
			r.meter(rn)
		}
		if end {
			pendingEvent = ""
		} else {
			// Only the window's own flushes pace the deltas: a flush that another frame
			// or the other kind of text caused does not start the window again, so the
			// next delta waits only for what is left of it since the last timed flush
			// (nothing after a tool that ran longer than the window).
			lastFlush = time.Now()
		}
		if timer != nil {
			timer.Stop()
			timerC = nil
		}
		if !end && stream.Held() > 0 {
			// Give up what only fingerprints hold back once the text goes quiet.
			if quiet == nil {
				quiet = time.NewTimer(HoldQuiet)
			} else {
				quiet.Reset(HoldQuiet)
			}
			quietC = quiet.C
		} else if quiet != nil {
			quiet.Stop()
			quietC = nil
		}
	}
	for {
		select {
		case <-q.signal:
		case <-timerC:
			timerC = nil
			flush(false)
			continue
		case <-quietC:
			quietC = nil
			if len(pending) == 0 && pendingEvent != "" {
				if text := stream.Release(secrets()); text != "" {
					raw, _ := json.Marshal(protocol.TextData{Text: text})
					r.emitRaw(rn, pendingEvent, raw)
				}
			}
			continue
		}
		var closed bool
		buf, closed = q.take(buf)
		for _, f := range buf {
			switch f.Event {
			case protocol.EvToken, protocol.EvReasoning:
				var td protocol.TextData
				if err := json.Unmarshal(f.Data, &td); err != nil {
					r.log.Warn("malformed text frame from sidecar dropped", "stream", rn.streamID, "err", err)
					continue
				}
				if pendingEvent != "" && pendingEvent != f.Event {
					flush(true)
				}
				if rn.status != RunWorking {
					flush(true)
					r.setStatus(rn, RunWorking, nil)
				}
				r.noteText(rn, f.Event, td.Text)
				pendingEvent = f.Event
				pending = append(pending, td.Text...)
				if timerC == nil {
					wait := max(0, window-time.Since(lastFlush))
					if timer == nil {
						timer = time.NewTimer(wait)
					} else {
						timer.Reset(wait)
					}
					timerC = timer.C
				}
			default:
				flush(true)
				r.relay(rn, f)
			}
		}
		if closed {
			flush(true)
			if timer != nil {
				timer.Stop()
			}
			if quiet != nil {
				quiet.Stop()
			}
			return
		}
	}
}

func (r *Runner) noteText(rn *run, event, text string) {
	if event == protocol.EvToken {
		now := time.Now()
		if rn.firstToken.IsZero() {
			rn.firstToken = now
		}
		rn.lastToken = now
		rn.tokenFrames++
		rn.text.WriteString(text)
	} else {
		rn.reasoning.WriteString(text)
	}
}

// relay normalises one non-text sidecar frame and emits it. Frames with an unknown
// event or a data member that is not a JSON object are dropped with a warning: a
// misbehaving sidecar must not reach the window with garbage.
func (r *Runner) relay(rn *run, f protocol.FrameParams) {
	if !slices.Contains(protocol.SidecarEvents, f.Event) {
		r.log.Warn("unknown frame from sidecar dropped", "stream", rn.streamID, "event", f.Event)
		return
	}
	data := f.Data
	if len(data) == 0 || string(data) == "null" {
		data = json.RawMessage("{}")
	}
	if data[0] != '{' || !json.Valid(data) {
		r.log.Warn("frame with non-object data dropped", "stream", rn.streamID, "event", f.Event)
		return
	}
	if r.relayTool(rn, f.Event, data) {
		return
	}
	if f.Event == protocol.EvAgentSession {
		var d protocol.AgentSessionData
		if err := json.Unmarshal(data, &d); err == nil {
			r.noteAgentSession(rn, d.AgentSessionID)
		}
		return
	}
	if f.Event == protocol.EvAgentTitle {
		var d protocol.AgentTitleData
		if err := json.Unmarshal(data, &d); err == nil {
			r.applyAgentTitle(rn, d.Title)
		}
		return
	}
	if f.Event == protocol.EvPlan {
		// An agent's plan is the chat's todo list.
		var d protocol.TodoList
		if err := json.Unmarshal(data, &d); err == nil {
			if d.Todos == nil {
				d.Todos = []protocol.TodoItem{}
			}
			r.emit(rn, protocol.EvTodoState, map[string]any{"todos": d.Todos})
		}
		return
	}
	if f.Event == protocol.EvAgentStatus {
		var d protocol.AgentStatusData
		if err := json.Unmarshal(data, &d); err == nil && d.Text != "" {
			r.setStatus(rn, RunWorking, &RunStatusData{Detail: clip(d.Text, 300)})
		}
		return
	}
	if f.Event == protocol.EvSteerPending {
		var d protocol.SteerPendingData
		if err := json.Unmarshal(data, &d); err == nil {
			r.noteSteerPending(rn, d)
		}
		return
	}
	switch f.Event {
	case protocol.EvUsage:
		var u protocol.Usage
		if err := json.Unmarshal(data, &u); err == nil {
			rn.usage = u
		}
		r.emitRaw(rn, f.Event, data)
		r.meter(rn)
		return
	case protocol.EvProviderPhase:
		r.emitRaw(rn, f.Event, data)
		var pd struct {
			Phase *struct {
				Phase           string  `json:"phase"`
				ProgressPercent float64 `json:"progress_percent"`
			} `json:"phase"`
		}
		_ = json.Unmarshal(data, &pd)
		if pd.Phase != nil && pd.Phase.Phase == protocol.PhasePromptReading {
			r.setStatus(rn, RunPromptReading, &RunStatusData{ProgressPercent: pd.Phase.ProgressPercent})
		} else {
			r.setStatus(rn, RunWorking, nil)
		}
		return
	case protocol.EvRateLimitWait:
		r.emitRaw(rn, f.Event, data)
		var w protocol.RateLimitWaitData
		_ = json.Unmarshal(data, &w)
		r.setStatus(rn, RunRateLimitWait, &RunStatusData{Until: w.Until, Provider: w.Provider})
		return
	case protocol.EvCompressing:
		r.emitRaw(rn, f.Event, data)
		r.setStatus(rn, RunCompressing, nil)
		return
	case protocol.EvCompressionFinished:
		r.emitRaw(rn, f.Event, data)
		r.setStatus(rn, RunWorking, nil)
		return
	}
	r.emitRaw(rn, f.Event, data)
}

// meter emits a metering frame at most once a second: the usage so far and the
// output rate. Between usage reports the output count is estimated from token deltas.
func (r *Runner) meter(rn *run) {
	if time.Since(rn.lastMetering) < time.Second {
		return
	}
	rn.lastMetering = time.Now()
	u := rn.usage
	if u.OutputTokens < rn.tokenFrames {
		u.OutputTokens = rn.tokenFrames
	}
	r.emit(rn, protocol.EvMetering, MeteringData{Usage: u, TPS: rn.tps(), Estimated: rn.usage.OutputTokens < rn.tokenFrames})
}

// tps is the output rate in tokens per second between the first and the last token:
// the provider's output token count when it reported one, else the number of token
// deltas.
func (rn *run) tps() float64 {
	if rn.firstToken.IsZero() {
		return 0
	}
	secs := rn.lastToken.Sub(rn.firstToken).Seconds()
	if secs < 0.05 {
		return 0
	}
	n := float64(rn.tokenFrames)
	if rn.usage.OutputTokens > 0 {
		n = float64(rn.usage.OutputTokens)
	}
	return n / secs
}

// setStatus emits run_status when the status changes: status "" is sent as null (the
// turn is over); extra's members (until, provider, progress_percent) go beside it.
func (r *Runner) setStatus(rn *run, status string, extra *RunStatusData) {
	if status == rn.status && extra == nil {
		return
	}
	rn.status = status
	var data RunStatusData
	if extra != nil {
		data = *extra
	}
	data.Status = nil
	if status != "" {
		data.Status = &status
	}
	r.emit(rn, protocol.EvRunStatus, data)
}
