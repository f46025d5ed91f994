package hermes

import (
	"context"
	"fmt"
	"sync"

	"talaria/sidecar/protocol"
)

// hsession is one Talaria session bound to one Hermes session. The Hermes session has
// a durable id (stored: its row in Hermes's state.db, the agent_session_id the host
// keeps) and, while a gateway holds it live, a runtime id (sid) valid in that gateway
// generation only.
type hsession struct {
	r  *Runtime
	id string // Talaria session id

	mu     sync.Mutex
	gw     *gateway
	gen    int
	sid    string
	stored string
	title  string
	yolo   bool
	// reasoning is the reasoning effort last set on the Hermes session, and
	// wantReasoning the one the current turn asks for (session.create takes it in
	// dialect B; chat.go).
	reasoning, wantReasoning string
	turn                     *turn
	// usageBase is Hermes's cumulative session usage when the current turn began
	// (Hermes reports session totals; frames carry the turn's).
	cum protocol.Usage
	// busy: Hermes's session is running a turn (its session.info's running, our own
	// prompt.submit, a message.start of Hermes's own between our turns); idleCh is
	// closed when it stops. Hermes keeps running a moment after message.complete (the
	// turn's after-work) and, after an interrupt, until its model call returns; a
	// prompt sent meanwhile is refused as busy (4009, dialect A) or queued (B).
	// reportsRunning: this session's session.info carries running at all (0.19.0
	// and the 0.22 line do; server.py, methods_prompt.py), else busy is never
	// waited on.
	busy, reportsRunning bool
	idleCh               chan struct{}

	qmu   sync.Mutex
	queue []inbound
	wake  chan struct{}
	quit  chan struct{}
}

func newSession(r *Runtime, id string) *hsession {
	s := &hsession{r: r, id: id, wake: make(chan struct{}, 1), quit: make(chan struct{})}
	go s.pump()
	return s
}

// deliver queues one gateway message (called by the gateway's reader; never blocks).
func (s *hsession) deliver(in inbound) {
	s.qmu.Lock()
	s.queue = append(s.queue, in)
	s.qmu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pump hands queued messages to the running turn, or handles them itself between turns.
func (s *hsession) pump() {
	for {
		select {
		case <-s.quit:
			return
		case <-s.wake:
		}
		for {
			s.qmu.Lock()
			if len(s.queue) == 0 {
				s.qmu.Unlock()
				break
			}
			in := s.queue[0]
			s.queue = s.queue[1:]
			s.qmu.Unlock()
			s.mu.Lock()
			t := s.turn
			s.mu.Unlock()
			if t != nil && t.accepts(in) {
				t.handle(in)
				continue
			}
			s.idle(in)
		}
	}
}

// idle handles a message no turn takes: titles and session info are remembered and
// sent as $/session_event; a server request is declined (nothing can answer it).
func (s *hsession) idle(in inbound) {
	if in.Request != nil {
		s.r.log.Warn("declining a Hermes request that arrived with no turn running", "method", in.Request.Method)
		if gw := s.gateway(); gw != nil {
			gw.respondError(in.Request.ID, codeMethodNotFound, "no turn of this session is running") //nolint:errcheck // the gateway times it out anyway
		}
		return
	}
	ev := in.Event
	switch b := ev.Body.(type) {
	case *evSessionTitle:
		s.noteTitle(b.Title, nil)
	case *evSessionInfo:
		s.noteInfo(b.Info, nil)
	case *evMessageStart:
		s.setBusy(true) // a turn of Hermes's own (a goal follow-up, a notification)
	default:
		s.r.log.Debug("a Hermes event between turns", "type", ev.Type)
	}
}

// noteTitle records a title Hermes gave the session and reports it: through emit when
// a turn is running, else as $/session_event.
func (s *hsession) noteTitle(title string, emit func(string, any)) {
	if title == "" {
		return
	}
	s.mu.Lock()
	same := s.title == title
	s.title = title
	s.mu.Unlock()
	if same {
		return
	}
	if emit != nil {
		emit(protocol.EvAgentTitle, protocol.AgentTitleData{Title: title})
		return
	}
	s.r.sendSessionEvent(s.id, protocol.EvAgentTitle, protocol.AgentTitleData{Title: title})
}

// noteInfo reads session.info (decoded: nil when malformed): the stored id (it moves
// when Hermes compresses a session into a continuation), the title and whether the
// session runs a turn.
func (s *hsession) noteInfo(p *gwSessionInfo, emit func(string, any)) {
	if p == nil {
		return
	}
	if p.Running != nil {
		s.mu.Lock()
		s.reportsRunning = true
		s.mu.Unlock()
		s.setBusy(*p.Running)
	}
	if p.Stored != "" {
		s.noteStored(p.Stored, emit)
	}
	s.noteTitle(p.Title, emit)
}

// noteStored records the Hermes stored session id and reports a change.
func (s *hsession) noteStored(stored string, emit func(string, any)) {
	s.mu.Lock()
	same := s.stored == stored
	s.stored = stored
	s.mu.Unlock()
	if same {
		return
	}
	if emit != nil {
		emit(protocol.EvAgentSession, protocol.AgentSessionData{AgentSessionID: stored})
		return
	}
	s.r.sendSessionEvent(s.id, protocol.EvAgentSession, protocol.AgentSessionData{AgentSessionID: stored})
}

func (s *hsession) gateway() *gateway {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gw
}

// forgetLive drops the runtime id after its gateway exited (r.mu held by the caller).
func (s *hsession) forgetLive() {
	s.mu.Lock()
	s.gw, s.sid, s.gen = nil, "", 0
	s.setBusyLocked(false)
	s.mu.Unlock()
}

// setBusy records whether Hermes's session is running a turn.
func (s *hsession) setBusy(busy bool) {
	s.mu.Lock()
	s.setBusyLocked(busy)
	s.mu.Unlock()
}

func (s *hsession) setBusyLocked(busy bool) {
	if busy == s.busy {
		return
	}
	s.busy = busy
	if busy {
		s.idleCh = make(chan struct{})
	} else if s.idleCh != nil {
		close(s.idleCh)
		s.idleCh = nil
	}
}

// idleWait returns a channel closed when Hermes's session stops running its turn, or
// nil when it is idle (or does not say).
func (s *hsession) idleWait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.busy || !s.reportsRunning {
		return nil
	}
	return s.idleCh
}

// live returns the runtime session id in gateway generation gen, binding one when
// there is none: the session's Hermes session resumed (stored, or agentSessionID from
// the host), else a new one created in cwd, seeded with history. It reports whether a
// new Hermes session was created. Errors: the gateway's, as *protocol.Error.
func (s *hsession) live(ctx context.Context, gw *gateway, d *dialect, gen int, agentSessionID, cwd, model, title string, history []protocol.ChatMessage) (sid string, created bool, err error) {
	s.mu.Lock()
	if s.gw == gw && s.gen == gen && s.sid != "" {
		sid := s.sid
		s.mu.Unlock()
		return sid, false, nil
	}
	stored := s.stored
	if agentSessionID != "" {
		stored = agentSessionID
	}
	s.mu.Unlock()

	if stored != "" {
		var res resumeReply
		err := gw.call(ctx, "session.resume", d.withProfile(map[string]any{"session_id": stored}), &res)
		if err == nil && res.SessionID != "" {
			s.bind(gw, gen, res.SessionID, firstNonEmpty(res.Resumed, stored))
			if res.Info.Title != "" {
				s.mu.Lock()
				s.title = res.Info.Title
				s.mu.Unlock()
			}
			return res.SessionID, false, nil
		}
		// A Hermes session that no longer exists (deleted in Hermes) is replaced by a
		// new one seeded with the transcript; anything else is the turn's error.
		var re *RPCError
		if !asRPC(err, &re) || re.Code != 4007 {
			if err == nil {
				err = fmt.Errorf("session.resume returned no session id")
			}
			return "", false, gatewayError("resuming the Hermes session "+stored, err)
		}
		s.r.log.Warn("the Hermes session of this chat is gone; starting a new one from the transcript", "stored", stored)
	}
	params := map[string]any{}
	if cwd != "" {
		params["cwd"] = cwd
	}
	if model != "" {
		params["model"] = model
	}
	if title != "" {
		params["title"] = title
	}
	s.mu.Lock()
	if want := s.wantReasoning; want != "" && d.name == "B" {
		params["reasoning_effort"] = want // config.set right after could race the agent's build
	}
	s.mu.Unlock()
	if seed := seedHistory(history); len(seed) > 0 {
		params["messages"] = seed
	}
	var res createReply
	if err := gw.call(ctx, "session.create", d.withProfile(params), &res); err != nil {
		return "", false, gatewayError("creating a Hermes session", err)
	}
	if res.SessionID == "" {
		return "", false, protocol.NewError(0, protocol.CondAgentIncompatible, "Hermes's session.create returned no session_id")
	}
	s.bind(gw, gen, res.SessionID, res.Stored)
	return res.SessionID, true, nil
}

func (s *hsession) bind(gw *gateway, gen int, sid, stored string) {
	s.mu.Lock()
	if s.gw != nil && s.sid != "" {
		s.gw.detach(s.sid)
	}
	s.gw, s.gen, s.sid = gw, gen, sid
	if stored != "" {
		s.stored = stored
	}
	s.cum = protocol.Usage{}
	s.setBusyLocked(false)
	s.mu.Unlock()
	gw.attach(sid, s)
}

// seedHistory turns the transcript into Hermes's session.create seed rows (user,
// assistant and system text; tool rows are left out: Hermes's seed keeps text only).
func seedHistory(history []protocol.ChatMessage) []map[string]any {
	var out []map[string]any
	for _, m := range history {
		switch m.Role {
		case "user", "assistant", "system":
		default:
			continue
		}
		if m.Content == "" {
			continue
		}
		out = append(out, map[string]any{"role": m.Role, "content": m.Content})
	}
	return out
}

// close releases the Hermes session's live state in the gateway (session.close) and
// stops the pump.
func (s *hsession) close(ctx context.Context) bool {
	s.mu.Lock()
	gw, sid := s.gw, s.sid
	s.gw, s.sid = nil, ""
	s.mu.Unlock()
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	if gw == nil || sid == "" {
		return false
	}
	gw.detach(sid)
	err := gw.call(ctx, "session.close", map[string]any{"session_id": sid}, nil)
	return err == nil
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// gatewayError turns a gateway failure into a protocol error: the gateway gone is
// sidecar_unavailable, a refused call agent_unavailable with Hermes's own message.
func gatewayError(what string, err error) *protocol.Error {
	var re *RPCError
	switch {
	case asRPC(err, &re):
		return protocol.NewError(0, protocol.CondAgentUnavailable, fmt.Sprintf("Hermes refused %s: %s", what, re.Message))
	case isGatewayExit(err):
		return protocol.NewError(0, protocol.CondSidecarUnavailable, fmt.Sprintf("Hermes's gateway exited while %s; Talaria restarts it, send the message again", what))
	}
	return protocol.NewError(0, protocol.CondAgentUnavailable, fmt.Sprintf("%s failed: %v", what, err))
}
