package turn

import (
	"errors"
	"fmt"
	"strings"

	"talaria/sidecar/protocol"
)

// Error types the window knows (docs/protocol.md, "What the host sends the window").
const (
	ErrTypeAuthMismatch    = "auth_mismatch"
	ErrTypeRateLimit       = "rate_limit"
	ErrTypeQuotaExhausted  = "quota_exhausted"
	ErrTypeContextTooLarge = "context_too_large"
	// ErrTypeImagesUnsupported: the model refused the images of the message (the
	// runtime's provider_code image_input_unsupported).
	ErrTypeImagesUnsupported       = "images_unsupported"
	ErrTypeModelNotFound           = "model_not_found"
	ErrTypeLocalRuntimeUnavailable = "local_runtime_unavailable"
	ErrTypeSidecarUnavailable      = "sidecar_unavailable"
	ErrTypeAgentIncompatible       = "agent_incompatible"
	ErrTypeNetwork                 = "network"
	ErrTypeError                   = "error"
	// ErrTypeSaveFailed: the turn ran but its answer could not be saved (the window
	// keeps what it streamed on screen).
	ErrTypeSaveFailed = "save_failed"
)

// AppError is the data of an apperror frame: what failed (Type, one of the ErrType*
// constants), a short Label, the provider's or agent's own Message, and a Hint that
// says what the user can do.
type AppError struct {
	Type    string `json:"type" ts:"AppErrorType"`
	Label   string `json:"label"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// Classify turns a chat.start failure into the AppError the window shows. err is
// usually a *protocol.Error whose condition decides; provider_error messages are
// matched for quota and context-length failures, which providers report only in text.
func Classify(err error) AppError {
	ae := classify(err)
	// The sidecar's own advice, when it has some (how to install or sign in to an
	// agent, what to fix in its settings), is better than the generic one.
	var pe *protocol.Error
	// (classify may have put it in its own words already: an agent's sign-in.)
	if errors.As(err, &pe) && pe.Data != nil && strings.TrimSpace(pe.Data.Hint) != "" && !strings.Contains(ae.Hint, pe.Data.Hint) {
		ae.Hint = pe.Data.Hint
	}
	return ae
}

func classify(err error) AppError {
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		return AppError{Type: ErrTypeError, Label: "Error", Message: err.Error(),
			Hint: "Try again. If it repeats, the logs folder (Settings) has details."}
	}
	msg := pe.Message
	if pe.Data != nil {
		// The provider's own code, when it sent one, is more reliable than its text.
		switch code := strings.ToLower(pe.Data.ProviderCode); {
		case strings.Contains(code, "insufficient_quota") || strings.Contains(code, "billing"):
			return AppError{ErrTypeQuotaExhausted, "Quota exhausted", msg,
				"Your account with this provider is out of credit or quota. Add credit on the provider's site or switch provider in Settings."}
		case strings.Contains(code, "context_length"):
			return AppError{ErrTypeContextTooLarge, "Conversation too long for the model", msg, contextHint}
		case code == "image_input_unsupported":
			return AppError{ErrTypeImagesUnsupported, "The model takes no images", msg,
				"Choose a model that accepts images in the chat's settings (a vision model), or remove the images and send again."}
		}
	}
	switch pe.Condition() {
	case protocol.CondCredentialMissing:
		if pe.Data.Hint != "" {
			// An ACP agent asking to sign in to it (sidecar/acp: its hint lists the
			// agent's own ways); there is no API key of Talaria's to fix.
			return AppError{ErrTypeAuthMismatch, "Sign-in needed", msg,
				"Sign in to the agent: use Sign in… here (the agent's own sign-in), or the agent's own login command in a terminal, then send again. " + pe.Data.Hint}
		}
		return AppError{ErrTypeAuthMismatch, "Authentication failed", msg,
			"The provider refused the API key. Enter a valid key in Settings (it is kept in the system keychain), or check that the key may use this model."}
	case protocol.CondModelNotFound:
		return AppError{ErrTypeModelNotFound, "Model not found", msg,
			"Choose a model this endpoint serves in Settings (Test connection lists them). For Ollama, download it first: ollama pull <model>."}
	case protocol.CondRateLimited:
		hint := "The provider is limiting requests. Wait a moment and send again, or pick another model in Settings."
		if pe.Data.RetryAfterSeconds > 0 {
			hint = fmt.Sprintf("The provider asked to wait %.0f s. Send again after that, or pick another model in Settings.", pe.Data.RetryAfterSeconds)
		}
		if isQuota(msg) {
			return AppError{ErrTypeQuotaExhausted, "Quota exhausted", msg,
				"Your account with this provider is out of credit or quota. Add credit on the provider's site or switch provider in Settings."}
		}
		return AppError{ErrTypeRateLimit, "Rate limited", msg, hint}
	case protocol.CondLocalRuntimeUnavailable:
		return AppError{ErrTypeLocalRuntimeUnavailable, "Local model server not running", msg,
			"Start your local model server (for example `ollama serve`, or llama.cpp's `llama-server`), or change the base URL in Settings."}
	case protocol.CondSidecarUnavailable:
		if pe.Data.Hint != "" {
			// The supervisor knows better (a remote host's lost connection).
			return AppError{ErrTypeSidecarUnavailable, "Agent process stopped", msg, pe.Data.Hint}
		}
		return AppError{ErrTypeSidecarUnavailable, "Agent process stopped", msg,
			"Talaria restarts the agent by itself. Send your message again; if this repeats, use Restart agent and check the sidecar log in the logs folder."}
	case protocol.CondAgentIncompatible:
		return AppError{ErrTypeAgentIncompatible, "Agent incompatible", msg,
			"The agent does not speak this app's protocol. Update Talaria (and Hermes Agent if you use it)."}
	case protocol.CondAgentUnavailable:
		return AppError{ErrTypeSidecarUnavailable, "Agent stopped", msg,
			"Talaria starts the agent again when you send your next message. If this repeats, check the agent's settings and its log in Diagnostics."}
	case protocol.CondAgentError:
		return AppError{ErrTypeError, "Agent error", msg,
			"The agent refused or failed this request; its own words are above. Try again, or check the agent's settings."}
	case protocol.CondInvalidParams:
		return AppError{ErrTypeError, "Not configured", msg,
			"Open Settings and choose a provider, base URL and model."}
	case protocol.CondContextTooLong:
		return AppError{ErrTypeContextTooLarge, "Conversation too long for the model", msg, contextHint}
	case protocol.CondNetworkError:
		return AppError{ErrTypeNetwork, "Network error", msg,
			"Talaria could not reach the provider. Check your connection and the base URL in Settings."}
	case protocol.CondStreamInterrupted:
		return AppError{ErrTypeNetwork, "The answer stopped", msg,
			"The provider stopped sending before the answer was finished; what arrived is kept. Send again, or check the provider (a local server's log, or its status page)."}
	case protocol.CondProviderError:
		switch {
		case isQuota(msg):
			return AppError{ErrTypeQuotaExhausted, "Quota exhausted", msg,
				"Your account with this provider is out of credit or quota. Add credit on the provider's site or switch provider in Settings."}
		case isContextTooLarge(msg):
			return AppError{ErrTypeContextTooLarge, "Conversation too long for the model", msg, contextHint}
		case pe.Data.HTTPStatus == 0 && pe.Data.ProviderCode == "" && isNetworkFailure(msg):
			// Another runtime's provider_error for a failed connection.
			return AppError{ErrTypeNetwork, "Network error", msg,
				"Talaria could not reach the provider. Check your connection and the base URL in Settings."}
		}
		return AppError{ErrTypeError, "Provider error", msg,
			"The provider returned an error. Try again; if it repeats, check the model and base URL in Settings."}
	}
	return AppError{ErrTypeError, "Error", msg, "Try again. If it repeats, the logs folder (Settings) has details."}
}

// contextHint is what to do about a conversation too long for the model.
const contextHint = "Use Summarise and continue: the older messages are summarised and your message is sent again. Or start a new chat, or choose a model with a larger context window."

func isQuota(msg string) bool {
	m := strings.ToLower(msg)
	for _, k := range []string{"insufficient_quota", "quota", "billing", "insufficient credits", "out of credits", "payment required"} {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}

// isNetworkFailure reports whether a provider_error without an HTTP status reads like a
// failed connection (a runtime that has no network_error condition of its own).
func isNetworkFailure(msg string) bool {
	m := strings.ToLower(msg)
	for _, k := range []string{"connection refused", "connection reset", "no route to host", "no such host", "network is unreachable", "dial tcp", "i/o timeout", "tls handshake", "could not reach", "timed out", "timeout"} {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}

func isContextTooLarge(msg string) bool {
	m := strings.ToLower(msg)
	for _, k := range []string{"context_length_exceeded", "maximum context length", "context length", "context window", "too many tokens", "prompt is too long"} {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}
