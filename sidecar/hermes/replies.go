package hermes

import (
	"encoding/json"
)

// The gateway's replies the runtime reads, one named type per method (the members it
// uses; Hermes sends more). gateway.call decodes a reply into them; a reply that does
// not fit is the call's error ("unexpected <method> result"). Sources as in
// docs/hermes.md, "Where each name was confirmed".

// capabilitiesReply is client.capabilities' result (dialect B only): the server
// request methods the gateway may send.
type capabilitiesReply struct {
	ServerRequests []string `json:"server_requests"`
}

// configFullReply is config.get {key: full}'s result: what the runtime reads of
// Hermes's config (approvals.timeout, seconds).
type configFullReply struct {
	Config struct {
		Approvals struct {
			Timeout json.Number `json:"timeout"`
		} `json:"approvals"`
	} `json:"config"`
}

// resumeReply is session.resume's result: the runtime session id, the stored id it
// resumed (when Hermes moved to a continuation), the display transcript (read by
// historyRows) and the session's title.
type resumeReply struct {
	SessionID string          `json:"session_id"`
	Resumed   string          `json:"resumed"`
	Messages  json.RawMessage `json:"messages"`
	Info      struct {
		Title string `json:"title"`
	} `json:"info"`
}

// createReply is session.create's result: the runtime and stored session ids.
type createReply struct {
	SessionID string `json:"session_id"`
	Stored    string `json:"stored_session_id"`
}

// statusReply is prompt.submit's result (streaming, queued or steered) and
// session.steer's (queued or rejected).
type statusReply struct {
	Status string `json:"status"`
}

// approvalRespondReply is approval.respond's result (dialect A): how many waiting
// approvals it resolved.
type approvalRespondReply struct {
	Resolved int `json:"resolved"`
}

// compressReply is session.compress's result: status compressed (or why not), the
// message and token counts before and after, and Hermes's own message.
type compressReply struct {
	Status         string `json:"status"`
	BeforeMessages int    `json:"before_messages"`
	AfterMessages  int    `json:"after_messages"`
	BeforeTokens   int64  `json:"before_tokens"`
	AfterTokens    int64  `json:"after_tokens"`
	Message        string `json:"message"`
}

// sessionListReply is session.list's result: Hermes's sessions of every surface;
// StartedAt is Unix seconds.
type sessionListReply struct {
	Sessions []struct {
		ID           string  `json:"id"`
		Title        string  `json:"title"`
		Preview      string  `json:"preview"`
		StartedAt    float64 `json:"started_at"`
		MessageCount int     `json:"message_count"`
		Source       string  `json:"source"`
	} `json:"sessions"`
}

// modelOptionsReply is model.options' result: the current model and provider and
// every provider with its models.
type modelOptionsReply struct {
	Model     string               `json:"model"`
	Provider  string               `json:"provider"`
	Providers []modelOptionsVendor `json:"providers"`
}

// modelOptionsVendor is one provider of model.options. Models is a list of ids or of
// {id, name} objects (read by modelIDs); Available (else Authed) says whether it can
// be used, nil when Hermes does not say.
type modelOptionsVendor struct {
	Slug      string          `json:"slug"`
	Name      string          `json:"name"`
	Models    json.RawMessage `json:"models"`
	IsCurrent bool            `json:"is_current"`
	Available *bool           `json:"available"`
	Authed    *bool           `json:"authenticated"`
}

// modelIDs reads Models: a list of ids, or of {id, name} objects (the id, else the
// name); anything else is no models.
func (v *modelOptionsVendor) modelIDs() []string {
	var ids []string
	if json.Unmarshal(v.Models, &ids) == nil {
		return ids
	}
	var objs []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	json.Unmarshal(v.Models, &objs) //nolint:errcheck // neither shape: no models
	for _, o := range objs {
		ids = append(ids, firstNonEmpty(o.ID, o.Name))
	}
	return ids
}
