package core

import (
	"slices"

	"talaria/backend/supervisor"
	"talaria/sidecar/protocol"
)

// RuntimeFeatures are what a chat's runtime does beyond the basics, for the window to
// show only what works (docs/protocol.md, rpc.hello "features" and "capabilities").
type RuntimeFeatures struct {
	Images          bool `json:"images"`           // image attachments
	ReasoningEffort bool `json:"reasoning_effort"` // the reasoning effort option
	MaxOutputTokens bool `json:"max_output_tokens"`
	// ModelChoice: the chat can pick its model: from the provider's list (the built-in
	// runtime) or the agent's (agent.models, Hermes); other runtimes bring their own.
	ModelChoice bool `json:"model_choice"`
	// Compaction: Talaria summarises older turns itself (the built-in runtime), or the
	// runtime serves chat.compact.
	Compaction bool `json:"compaction"`
	// Titles: "Regenerate title" works (the built-in runtime's model names the chat).
	Titles bool `json:"titles"`
}

// Features reads a runtime's features from its sidecar's rpc.hello (the
// built-in runtime's are known before it answered).
func Features(kind string, sup interface{ Status() supervisor.Status }) RuntimeFeatures {
	var feats, caps []string
	if sup != nil {
		st := sup.Status()
		feats, caps = st.Features, st.Capabilities
	}
	if kind == protocol.RuntimeBuiltin {
		return RuntimeFeatures{Images: true, ReasoningEffort: true, MaxOutputTokens: true, ModelChoice: true, Compaction: true, Titles: true}
	}
	return RuntimeFeatures{
		Images:          slices.Contains(feats, protocol.FeatureImages),
		ReasoningEffort: slices.Contains(feats, protocol.FeatureReasoningEffort),
		MaxOutputTokens: slices.Contains(feats, protocol.FeatureMaxOutputTokens),
		Compaction:      slices.Contains(caps, protocol.MethodChatCompact),
		ModelChoice:     slices.Contains(caps, protocol.MethodAgentModels),
	}
}
