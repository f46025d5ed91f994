package hermes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/server"
)

// interruptWait bounds how long a stopped turn waits for Hermes to acknowledge the
// interrupt (its message.complete with status interrupted) before replying anyway.
const interruptWait = 800 * time.Millisecond

// busyWait bounds how long a turn waits for Hermes to finish an earlier run of the
// same session before it sends its prompt anyway.
const busyWait = 30 * time.Second

func invalid(msg string) *protocol.Error {
	return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, msg)
}

// session returns the Talaria session's binding, creating it.
func (r *Runtime) session(id string) *hsession {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[id]
	if s == nil {
		s = newSession(r, id)
		r.sessions[id] = s
	}
	return s
}

func (r *Runtime) lookup(id string) *hsession {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[id]
}

func (s *hsession) storedID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored
}

// chatStart runs one turn: bind (resume or create) the Hermes session, send
// prompt.submit, translate events until message.complete, a stop or the gateway's exit.
func (r *Runtime) chatStart(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.ChatStartParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	if p.SessionID == "" || p.StreamID == "" {
		return nil, invalid("chat.start needs session_id and stream_id")
	}
	if strings.TrimSpace(p.UserMessage) == "" && !protocol.HasImages(p.UserParts) {
		return nil, invalid("chat.start needs a user_message")
	}
	gw, d, gen, err := r.current(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return cancelledEmpty(), nil
		}
		return nil, err
	}
	s := r.session(p.SessionID)
	emit := func(event string, data any) {
		if err := call.Emit(event, data); err != nil && !errors.Is(err, server.ErrCallDone) {
			call.Log.Warn("emitting a frame failed", "event", event, "err", err)
		}
	}
	t := newTurn(r, s, d.name, p.StreamID, d.approvalTimeout, emit)
	if err := r.claimTurn(s, t, p.StreamID); err != nil {
		return nil, err
	}
	defer r.releaseTurn(s, t, p.StreamID)

	sid, err := r.prepareTurn(ctx, call, gw, d, gen, s, &p, emit)
	if err != nil {
		if ctx.Err() != nil {
			return cancelledEmpty(), nil
		}
		return nil, err
	}
	text := p.UserMessage
	if strings.TrimSpace(text) == "" {
		text = imageOnlyText(p.UserParts)
	}
	if !s.waitIdle(ctx, gw, emit, call.Log) {
		return cancelledEmpty(), nil
	}
	var sub statusReply
	t.arm()
	s.setBusy(true)
	if err := gw.call(ctx, "prompt.submit", map[string]any{"session_id": sid, "text": text}, &sub); err != nil {
		s.setBusy(false)
		if ctx.Err() != nil {
			return cancelledEmpty(), nil
		}
		var re *RPCError
		if asRPC(err, &re) && re.Code == 4009 {
			e := protocol.NewError(0, protocol.CondAgentUnavailable, "Hermes says this session is still busy with another turn: "+re.Message)
			e.Data.Hint = "Wait for Hermes to finish (a stopped turn ends when its model call returns), or stop the turn in the Hermes app that started it, then send the message again."
			return nil, e
		}
		return nil, gatewayError("the prompt", err)
	}
	if sub.Status != "" && sub.Status != "streaming" {
		// queued or steered: Hermes was busy with a turn Talaria did not start.
		call.Log.Warn("Hermes did not start the prompt at once", "status", sub.Status)
	}
	return t.await(ctx, gw, sid, call.Log)
}

// claimTurn makes t the session's running turn and registers its stream. Errors:
// agent_unavailable when the chat already has a turn running.
func (r *Runtime) claimTurn(s *hsession, t *turn, streamID string) error {
	// Lock order: a turn's mu before its session's (the pump); so the previous turn is
	// read under s.mu and asked outside it.
	s.mu.Lock()
	prev := s.turn
	s.mu.Unlock()
	if prev != nil && !prev.isEnded() {
		return protocol.NewError(0, protocol.CondAgentUnavailable, "this chat already has a turn running in Hermes")
	}
	s.mu.Lock()
	if s.turn != prev {
		s.mu.Unlock()
		return protocol.NewError(0, protocol.CondAgentUnavailable, "this chat already has a turn running in Hermes")
	}
	s.turn = t
	s.mu.Unlock()
	r.mu.Lock()
	r.streams[streamID] = t
	r.mu.Unlock()
	return nil
}

// releaseTurn undoes claimTurn when the turn's chat.start returns.
func (r *Runtime) releaseTurn(s *hsession, t *turn, streamID string) {
	r.mu.Lock()
	delete(r.streams, streamID)
	r.mu.Unlock()
	s.mu.Lock()
	if s.turn == t {
		s.turn = nil
	}
	s.mu.Unlock()
}

// prepareTurn binds the chat's Hermes session in this gateway (reporting its stored
// id and title when they differ from the host's), applies YOLO and the reasoning
// effort, and queues the message's images. It returns the runtime session id.
// Errors: binding the session or sending an image failed (*protocol.Error).
func (r *Runtime) prepareTurn(ctx context.Context, call *server.Call, gw *gateway, d *dialect, gen int, s *hsession,
	p *protocol.ChatStartParams, emit func(string, any)) (string, error) {
	history := p.ConversationHistory
	if p.AgentSessionID != "" {
		history = nil // Hermes has the conversation: never re-sent as text
	}
	before := s.storedID()
	s.mu.Lock()
	s.wantReasoning = p.ReasoningEffort
	s.mu.Unlock()
	sid, created, err := s.live(ctx, gw, d, gen, p.AgentSessionID, p.Workspace, p.Model, p.Title, history)
	if err != nil {
		return "", err
	}
	if stored := s.storedID(); stored != "" && (stored != before || stored != p.AgentSessionID) {
		emit(protocol.EvAgentSession, protocol.AgentSessionData{AgentSessionID: stored})
	}
	if t := s.takeTitleFor(p.Title); t != "" {
		emit(protocol.EvAgentTitle, protocol.AgentTitleData{Title: t})
	}
	// YOLO is per Hermes session (config.set yolo, scope session).
	if d.has["config.set"] {
		s.mu.Lock()
		changed := s.yolo != p.Yolo
		s.yolo = p.Yolo
		s.mu.Unlock()
		if changed || p.Yolo {
			if err := gw.call(ctx, "config.set", map[string]any{"key": "yolo", "value": onOff(p.Yolo), "session_id": sid}, nil); err != nil {
				call.Log.Warn("setting Hermes's yolo failed", "err", err)
			}
		}
	}
	r.setReasoning(ctx, gw, s, sid, p.ReasoningEffort, created && d.name == "B", call.Log)
	if err := r.attachImages(ctx, gw, sid, p.UserParts); err != nil {
		return "", err
	}
	return sid, nil
}

// waitIdle waits while Hermes still runs an earlier turn of this session (its
// after-work, or a stopped turn whose model call has not returned), which would refuse
// the prompt as busy (A) or queue it behind that run (B): until its session.info says
// it stopped, busyWait at most, or the gateway's exit. It reports false when ctx ended
// first.
func (s *hsession) waitIdle(ctx context.Context, gw *gateway, emit func(string, any), log interface {
	Warn(msg string, args ...any)
}) bool {
	idle := s.idleWait()
	if idle == nil {
		return true
	}
	emit(protocol.EvAgentStatus, protocol.AgentStatusData{Kind: "waiting", Text: "Waiting for Hermes to finish the previous turn of this chat…"})
	select {
	case <-idle:
	case <-time.After(busyWait):
		log.Warn("Hermes's session is still running its previous turn; sending the prompt anyway", "waited", busyWait)
	case <-gw.done:
	case <-ctx.Done():
		return false
	}
	return true
}

// await waits for the turn's end (message.complete), the gateway's exit, or the host's
// stop (then session.interrupt, and Hermes's acknowledgement for interruptWait at
// most), and returns chat.start's result.
func (t *turn) await(ctx context.Context, gw *gateway, sid string, log interface {
	Warn(msg string, args ...any)
}) (*protocol.ChatResult, error) {
	select {
	case <-t.done:
		return t.result(false, nil)
	case <-gw.done:
		return t.result(false, fmt.Errorf("Hermes's gateway exited during the turn (%v); Talaria restarts it and the next message resumes this Hermes session", gw.Err()))
	case <-ctx.Done():
		t.mu.Lock()
		t.interrupting = true
		t.mu.Unlock()
		ictx, cancel := context.WithTimeout(context.Background(), interruptWait)
		err := gw.call(ictx, "session.interrupt", map[string]any{"session_id": sid}, nil)
		if err != nil {
			log.Warn("session.interrupt failed", "err", err)
		}
		select {
		case <-t.done:
		case <-ictx.Done():
		case <-gw.done:
		}
		cancel()
		return t.result(true, nil)
	}
}

func (t *turn) isEnded() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ended
}

// takeTitleFor returns Hermes's title when it differs from the host's.
func (s *hsession) takeTitleFor(hostTitle string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.title != "" && s.title != hostTitle {
		return s.title
	}
	return ""
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func cancelledEmpty() *protocol.ChatResult {
	return &protocol.ChatResult{Status: protocol.StatusCancelled, Partial: true, Messages: []protocol.ChatMessage{}, Provider: "hermes"}
}

// chatSteer hands a steer to Hermes (session.steer): it reaches the model with the
// next tool batch's result.
func (r *Runtime) chatSteer(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.SteerParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	if p.StreamID == "" || p.SteerID == "" || strings.TrimSpace(p.Text) == "" {
		return nil, invalid("chat.steer needs stream_id, steer_id and text")
	}
	r.mu.Lock()
	t := r.streams[p.StreamID]
	r.mu.Unlock()
	if t == nil || t.isEnded() {
		return protocol.SteerResult{Accepted: false}, nil
	}
	t.mu.Lock()
	for _, s := range t.steers {
		if s.SteerID == p.SteerID {
			t.mu.Unlock()
			return protocol.SteerResult{Accepted: true}, nil
		}
	}
	t.mu.Unlock()
	gw, sid := t.s.gatewayAndSID()
	if gw == nil {
		return protocol.SteerResult{Accepted: false}, nil
	}
	var res statusReply
	if err := gw.call(ctx, "session.steer", map[string]any{"session_id": sid, "text": p.Text}, &res); err != nil {
		call.Log.Info("Hermes refused a steer", "err", err)
		return protocol.SteerResult{Accepted: false}, nil
	}
	if res.Status != "queued" {
		return protocol.SteerResult{Accepted: false}, nil
	}
	t.mu.Lock()
	if !t.ended {
		t.steers = append(t.steers, &steerState{SteerItem: protocol.SteerItem{SteerID: p.SteerID, Text: p.Text}})
		t.send(protocol.EvSteerPending, protocol.SteerPendingData{Pending: t.pendingSteers()})
	}
	t.mu.Unlock()
	return protocol.SteerResult{Accepted: true, CanRedirect: false}, nil
}

func (s *hsession) gatewayAndSID() (*gateway, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gw, s.sid
}

// turnOf returns the running turn of a Talaria session.
func (r *Runtime) turnOf(sessionID string) *turn {
	s := r.lookup(sessionID)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn
}

// approvalRespond answers an approval card: dialect A with approval.respond (Hermes
// resolves the session's oldest approval: only the oldest unanswered card can be
// answered), dialect B with the response to its server request.
func (r *Runtime) approvalRespond(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.ApprovalRespondParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	switch p.Choice {
	case protocol.ChoiceOnce, protocol.ChoiceSession, protocol.ChoiceAlways, protocol.ChoiceDeny:
	default:
		return nil, invalid(fmt.Sprintf("approval.respond: choice %q is not once, session, always or deny", p.Choice))
	}
	t := r.turnOf(p.SessionID)
	if t == nil {
		return protocol.OKResult{OK: false}, nil
	}
	t.mu.Lock()
	var a *approvalState
	head := true
	for _, x := range t.approvals {
		if x.id == p.ApprovalID {
			a = x
			break
		}
		if !x.answered && !x.resolved {
			head = false
		}
	}
	if a == nil || a.answered || a.resolved {
		t.mu.Unlock()
		return protocol.OKResult{OK: false}, nil
	}
	if !slices.Contains(a.choices, p.Choice) {
		t.mu.Unlock()
		return nil, invalid(fmt.Sprintf("Hermes does not offer %q for this command (it offers %s)", p.Choice, strings.Join(a.choices, ", ")))
	}
	if t.dialect == "A" && !head {
		t.mu.Unlock()
		return nil, invalid("Hermes answers approvals in order: answer the older approval of this chat first")
	}
	a.answered = true
	reqID := a.reqID
	t.mu.Unlock()
	gw, sid := t.s.gatewayAndSID()
	if gw == nil {
		return protocol.OKResult{OK: false}, nil
	}
	var err error
	if reqID != nil {
		err = gw.respond(reqID, map[string]any{"choice": p.Choice})
	} else {
		var res approvalRespondReply
		err = gw.call(ctx, "approval.respond", map[string]any{"session_id": sid, "choice": p.Choice}, &res)
		if err == nil && res.Resolved == 0 {
			err = errors.New("nothing was waiting")
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		call.Log.Warn("answering Hermes's approval failed", "err", err)
		t.resolveApproval(a, protocol.ResolvedTimeout, "")
		return protocol.OKResult{OK: false}, nil
	}
	t.resolveApproval(a, protocol.ResolvedAnswered, p.Choice)
	return protocol.OKResult{OK: true}, nil
}

// approvalYolo turns Hermes's per-session approval bypass on or off; turning it on
// lets the session's waiting approvals through once.
func (r *Runtime) approvalYolo(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.ApprovalYoloParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("approval.yolo needs session_id")
	}
	s := r.lookup(p.SessionID)
	if s == nil {
		return protocol.ApprovalYoloResult{YoloEnabled: p.Enabled}, nil
	}
	s.mu.Lock()
	s.yolo = p.Enabled
	s.mu.Unlock()
	gw, sid := s.gatewayAndSID()
	if gw != nil {
		if err := gw.call(ctx, "config.set", map[string]any{"key": "yolo", "value": onOff(p.Enabled), "session_id": sid}, nil); err != nil {
			return nil, gatewayError("switching YOLO", err)
		}
	}
	released := 0
	if p.Enabled {
		if t := r.turnOf(p.SessionID); t != nil {
			t.mu.Lock()
			var waiting []*approvalState
			for _, a := range t.approvals {
				if !a.answered && !a.resolved && slices.Contains(a.choices, protocol.ChoiceOnce) {
					a.answered = true
					waiting = append(waiting, a)
				}
			}
			t.mu.Unlock()
			for _, a := range waiting {
				var err error
				if a.reqID != nil {
					err = gw.respond(a.reqID, map[string]any{"choice": protocol.ChoiceOnce})
				} else {
					err = gw.call(ctx, "approval.respond", map[string]any{"session_id": sid, "choice": protocol.ChoiceOnce}, nil)
				}
				t.mu.Lock()
				if err == nil {
					released++
					t.resolveApproval(a, protocol.ResolvedYolo, protocol.ChoiceOnce)
				}
				t.mu.Unlock()
			}
		}
	}
	return protocol.ApprovalYoloResult{YoloEnabled: p.Enabled, Released: released}, nil
}

// clarifyRespond answers a clarify or vault card. A secret goes to Hermes only; it is
// remembered (in memory) solely to redact it from logs and frames.
func (r *Runtime) clarifyRespond(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.ClarifyRespondParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	t := r.turnOf(p.SessionID)
	if t == nil {
		return protocol.OKResult{OK: false}, nil
	}
	t.mu.Lock()
	c := t.clarifies[p.ClarifyID]
	if c == nil || c.resolved || c.answering {
		t.mu.Unlock()
		return protocol.OKResult{OK: false}, nil
	}
	// One answer at a time reaches Hermes: a second clarify.respond while the first
	// is being sent is ok false; when the first fails (or is malformed) the card takes
	// an answer again.
	c.answering = true
	kind, requestID, reqID, qids, multi := c.kind, c.requestID, c.reqID, c.qids, c.multi
	t.mu.Unlock()
	sent := false
	defer func() {
		if !sent {
			t.mu.Lock()
			c.answering = false
			t.mu.Unlock()
		}
	}()

	declined := len(p.Response) == 0 || string(p.Response) == "null"
	var method string
	var params map[string]any
	var result any
	switch kind {
	case "secret", "sudo":
		value := ""
		if !declined {
			var v protocol.VaultResponse
			if err := json.Unmarshal(p.Response, &v); err != nil || v.Value == "" || strings.ContainsRune(v.Value, 0) || len(v.Value) > 64<<10 {
				return nil, invalid("a vault answer is {\"value\": \"...\"} (not empty, no NUL, at most 64 KiB), or null to decline")
			}
			value = v.Value
			r.addSecret(value)
		}
		if kind == "secret" {
			method, params, result = "secret.respond", map[string]any{"request_id": requestID, "value": value}, map[string]any{"value": value}
		} else {
			method, params, result = "sudo.respond", map[string]any{"request_id": requestID, "password": value}, map[string]any{"value": value}
		}
	default:
		answers, err := clarifyAnswers(p.Response, len(qids), multi, declined)
		if err != nil {
			return nil, err
		}
		if t.dialect == "A" {
			a := ""
			if len(answers) > 0 && answers[0] != nil {
				a = *answers[0]
			}
			method, params = "clarify.respond", map[string]any{"request_id": requestID, "answer": a}
		} else if declined {
			result = map[string]any{}
		} else {
			m := map[string]any{}
			for i, qid := range qids {
				if answers[i] == nil {
					m[qid] = nil
				} else {
					m[qid] = *answers[i]
				}
			}
			result = map[string]any{"answers": m}
		}
	}
	gw, _ := t.s.gatewayAndSID()
	if gw == nil {
		return protocol.OKResult{OK: false}, nil
	}
	var err error
	if reqID != nil {
		err = gw.respond(reqID, result)
	} else {
		err = gw.call(ctx, method, params, nil)
	}
	if err != nil {
		call.Log.Warn("answering Hermes's prompt failed", "kind", kind, "err", gatewayError("the answer", err).Message)
		return protocol.OKResult{OK: false}, nil
	}
	sent = true
	t.mu.Lock()
	t.resolveClarify(c, protocol.ResolvedAnswered)
	t.mu.Unlock()
	return protocol.OKResult{OK: true}, nil
}

// clarifyAnswers reads clarify.respond's response: one answer per question (a string,
// or for a multi-select question a list of strings, sent to Hermes as a JSON list);
// a plain string for a single question; null dismisses.
func clarifyAnswers(raw json.RawMessage, n int, multi []bool, declined bool) ([]*string, error) {
	out := make([]*string, n)
	if declined {
		return out, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if n != 1 {
			return nil, invalid(fmt.Sprintf("this clarify has %d questions: answer with a list", n))
		}
		out[0] = &one
		return out, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != n {
		return nil, invalid(fmt.Sprintf("clarify.respond: response must be a list of %d answers (strings, or lists of strings for multi-select questions)", n))
	}
	for i, item := range list {
		if string(item) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(item, &s) == nil {
			out[i] = &s
			continue
		}
		var many []string
		if json.Unmarshal(item, &many) == nil && (i >= len(multi) || multi[i] || len(many) == 1) {
			var v string
			if len(many) == 1 && (i >= len(multi) || !multi[i]) {
				v = many[0]
			} else {
				b, _ := json.Marshal(many)
				v = string(b)
			}
			out[i] = &v
			continue
		}
		return nil, invalid(fmt.Sprintf("clarify.respond: answer %d must be a string or a list of strings", i+1))
	}
	return out, nil
}

// chatEvict drops the Talaria session's binding: its live Hermes session is closed
// (Hermes keeps it in its own store; a later turn resumes it).
func (r *Runtime) chatEvict(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.EvictParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	r.mu.Lock()
	s := r.sessions[p.SessionID]
	if s != nil {
		s.mu.Lock()
		idle := s.turn == nil
		s.mu.Unlock()
		if idle {
			delete(r.sessions, p.SessionID)
		} else {
			s = nil
		}
	}
	r.mu.Unlock()
	if s == nil {
		return protocol.EvictResult{Evicted: false}, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s.close(cctx)
	return protocol.EvictResult{Evicted: true}, nil
}

// agentSessions lists Hermes's own sessions (session.list: every surface's sessions,
// the CLI's and TUI's included).
func (r *Runtime) agentSessions(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.AgentSessionsParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	if p.Limit <= 0 || p.Limit > 1000 {
		p.Limit = 200
	}
	gw, d, _, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	var res sessionListReply
	if err := gw.call(ctx, "session.list", d.withProfile(map[string]any{"limit": p.Limit}), &res); err != nil {
		return nil, gatewayError("listing its sessions", err)
	}
	out := protocol.AgentSessionsResult{Sessions: []protocol.AgentSessionInfo{}}
	for _, s := range res.Sessions {
		out.Sessions = append(out.Sessions, protocol.AgentSessionInfo{AgentSessionID: s.ID, Title: s.Title,
			Preview: s.Preview, StartedAt: int64(s.StartedAt * 1000), MessageCount: s.MessageCount, Source: s.Source})
	}
	return out, nil
}

// agentHistory reads one Hermes session's transcript (session.resume's messages) and
// releases it again unless a Talaria session holds it live.
func (r *Runtime) agentHistory(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.AgentHistoryParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	if p.AgentSessionID == "" {
		return nil, invalid("agent.history needs agent_session_id")
	}
	gw, d, _, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	held := false
	r.mu.Lock()
	for _, s := range r.sessions {
		s.mu.Lock()
		if s.stored == p.AgentSessionID && s.sid != "" && s.gw == gw {
			held = true
		}
		s.mu.Unlock()
	}
	r.mu.Unlock()
	var res resumeReply
	if err := gw.call(ctx, "session.resume", d.withProfile(map[string]any{"session_id": p.AgentSessionID}), &res); err != nil {
		var re *RPCError
		if asRPC(err, &re) && re.Code == 4007 {
			return nil, protocol.NewError(0, protocol.CondNotRunning, "Hermes has no session "+p.AgentSessionID+" (deleted?)")
		}
		return nil, gatewayError("opening its session", err)
	}
	if !held && res.SessionID != "" {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		gw.call(cctx, "session.close", map[string]any{"session_id": res.SessionID}, nil) //nolint:errcheck // best effort
		cancel()
	}
	r.mu.Lock()
	ver := r.version
	r.mu.Unlock()
	rows, err := historyRows(res.Messages, ver)
	if err != nil {
		return nil, err
	}
	return protocol.AgentHistoryResult{AgentSessionID: firstNonEmpty(res.Resumed, p.AgentSessionID), Title: res.Info.Title, Messages: rows}, nil
}

// agentModels lists the models Hermes can use (model.options).
func (r *Runtime) agentModels(ctx context.Context, call *server.Call) (any, error) {
	gw, d, _, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	var raw modelOptionsReply
	if err := gw.call(ctx, "model.options", d.withProfile(map[string]any{}), &raw); err != nil {
		if isMissing(err) {
			return nil, protocol.NewError(protocol.CodeMethodNotFound, protocol.CondMethodNotFound, "this Hermes has no model.options")
		}
		return nil, gatewayError("listing its models", err)
	}
	out := protocol.AgentModelsResult{Current: raw.Model, CurrentProvider: raw.Provider, Providers: []protocol.AgentModelProvider{}}
	for _, pr := range raw.Providers {
		mp := protocol.AgentModelProvider{Name: pr.Slug, Label: firstNonEmpty(pr.Name, pr.Slug), Current: pr.IsCurrent, Available: true, Models: []string{}}
		if pr.Available != nil {
			mp.Available = *pr.Available
		} else if pr.Authed != nil {
			mp.Available = *pr.Authed
		}
		mp.Models = append(mp.Models, pr.modelIDs()...)
		out.Providers = append(out.Providers, mp)
	}
	return out, nil
}
