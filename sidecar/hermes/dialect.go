package hermes

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"talaria/sidecar/protocol"
)

// dialect is what the connected gateway speaks (docs/hermes.md, "Dialects"):
//
//   - "A" (Hermes 0.11 to 0.19, checked against 0.19.0's tui_gateway/server.py):
//     prompts are events (approval.request, clarify.request, secret.request,
//     sudo.request) answered with methods (approval.respond FIFO per session,
//     clarify.respond / secret.respond / sudo.respond by request_id).
//   - "B" (after 0.19, checked against the 0.22 line's tui_gateway/server_requests.py
//     and tui_gateway/contracts/): the same prompts are requests from the server
//     (approval, clarify, secret, sudo) answered with JSON-RPC responses, withdrawn with
//     request.cancel; the client declares client.capabilities {server_requests: true};
//     parameter models refuse unknown keys (code 4000).
//
// It is detected at connect time: client.capabilities answers in B and is -32601 in A.
type dialect struct {
	name            string
	serverRequests  map[string]bool // B: the server request methods the gateway may send
	has             map[string]bool // gateway methods probed present
	profile         string
	approvalTimeout time.Duration // Hermes's approvals.timeout (A has no expiry event)
}

// gateway methods the runtime uses, by the protocol feature each one serves.
var probed = []string{"session.steer", "session.interrupt", "session.resume", "session.list",
	"session.title", "approval.respond", "clarify.respond", "secret.respond", "sudo.respond", "config.set",
	"model.options", "session.close", "image.attach_bytes", "session.compress"}

// detectDialect talks to a fresh gateway: client.capabilities decides the dialect, then
// each method the runtime relies on is probed with parameters Hermes refuses before it
// acts (a missing one, -32601, turns its feature off with a log line).
func detectDialect(ctx context.Context, gw *gateway, profile string, log *slog.Logger) (*dialect, error) {
	d := &dialect{name: "A", has: map[string]bool{}, profile: profile, approvalTimeout: 60 * time.Second}
	var caps capabilitiesReply
	err := gw.call(ctx, "client.capabilities", map[string]any{"server_requests": true}, &caps)
	switch {
	case err == nil:
		d.name = "B"
		d.serverRequests = map[string]bool{}
		for _, m := range caps.ServerRequests {
			d.serverRequests[m] = true
		}
		if !d.serverRequests["approval"] {
			return nil, protocol.NewError(0, protocol.CondAgentIncompatible,
				"its gateway answers client.capabilities but offers no approval requests: an interface this Talaria does not know (checked with 0.19.0 and the 0.22 line). Update Talaria.")
		}
	case isMissing(err):
	default:
		return nil, err
	}
	// session.create exists in every gateway (it cannot be probed without creating a
	// session); prompt.submit refuses an unknown session before acting.
	for _, m := range []string{"prompt.submit"} {
		if present, err := probeMethod(ctx, gw, m); err != nil {
			return nil, err
		} else if !present {
			return nil, protocol.NewError(0, protocol.CondAgentIncompatible,
				"its gateway has no "+m+": an interface this Talaria does not know (checked with 0.19.0 and the 0.22 line). Update Talaria or Hermes.")
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range probed {
		if d.name == "B" && (m == "approval.respond" || m == "clarify.respond" || m == "secret.respond" || m == "sudo.respond") {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			present, err := probeMethod(ctx, gw, m)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				log.Warn("probing a gateway method failed; taking it as present", "method", m, "err", err)
				present = true
			}
			d.has[m] = present
			if !present {
				log.Warn("the Hermes gateway has no method for this feature; it is turned off", "method", m)
			}
		}()
	}
	wg.Wait()
	// Hermes's approval timeout (config approvals.timeout, default 60 s): dialect A
	// sends no event when an approval expires, so the runtime keeps the same clock.
	var full configFullReply
	if err := gw.call(ctx, "config.get", d.withProfile(map[string]any{"key": "full"}), &full); err == nil {
		if n, err := full.Config.Approvals.Timeout.Float64(); err == nil && n > 0 {
			d.approvalTimeout = time.Duration(n * float64(time.Second))
		}
	}
	return d, nil
}

// probeMethod reports whether the gateway has method: it is called with a session id
// no session has (and no other parameter), which every session method refuses before
// doing anything; only -32601 means absent.
func probeMethod(ctx context.Context, gw *gateway, method string) (bool, error) {
	params := map[string]any{"session_id": "talaria-probe-no-such-session"}
	switch method {
	case "session.list":
		params = map[string]any{"limit": 1} // read-only
	case "model.options":
		return true, nil // read lazily by agent.models; its absence is reported there
	case "config.set":
		params = map[string]any{"key": "talaria.probe.unknown.key"} // refused: no such setter
	case "clarify.respond", "secret.respond", "sudo.respond":
		params = map[string]any{"request_id": "talaria-probe-no-such-request"}
	}
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err := gw.call(pctx, method, params, nil)
	switch {
	case err == nil:
		return true, nil
	case isMissing(err):
		return false, nil
	}
	var re *RPCError
	if asRPC(err, &re) {
		return true, nil
	}
	return false, err
}

func asRPC(err error, re **RPCError) bool {
	e, ok := err.(*RPCError)
	if ok {
		*re = e
	}
	return ok
}

// features are rpc.hello's feature flags for this gateway.
func (d *dialect) features() []string {
	f := []string{protocol.FeatureAgentSession, protocol.FeatureAgentTitle, protocol.FeatureApprovalChoices,
		protocol.FeatureAgentSecretStore}
	if d.name == "B" {
		f = append(f, protocol.FeatureClarifyMulti)
	}
	if d.has["image.attach_bytes"] {
		f = append(f, protocol.FeatureImages)
	}
	if d.has["config.set"] {
		f = append(f, protocol.FeatureReasoningEffort)
	}
	slices.Sort(f)
	return f
}

// disabledMethods are our methods the gateway cannot back.
func (d *dialect) disabledMethods() []string {
	var off []string
	if !d.has["session.steer"] {
		off = append(off, protocol.MethodChatSteer)
	}
	if d.name == "A" && !d.has["approval.respond"] {
		off = append(off, protocol.MethodApprovalRespond)
	}
	if d.name == "A" && !d.has["clarify.respond"] && !d.has["secret.respond"] {
		off = append(off, protocol.MethodClarifyRespond)
	}
	if !d.has["config.set"] {
		off = append(off, protocol.MethodApprovalYolo)
	}
	if !d.has["session.list"] {
		off = append(off, protocol.MethodAgentSessions)
	}
	if !d.has["session.resume"] {
		off = append(off, protocol.MethodAgentHistory)
	}
	if !d.has["session.compress"] {
		off = append(off, protocol.MethodChatCompact)
	}
	return off
}

// withProfile adds the profile parameter when a profile was chosen (both dialects take
// `profile` on session and config methods).
func (d *dialect) withProfile(p map[string]any) map[string]any {
	if d.profile != "" {
		p["profile"] = d.profile
	}
	return p
}
