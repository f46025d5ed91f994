package hermes

import (
	"regexp"

	"talaria/sidecar/protocol"
)

// Error classification of Hermes's own messages (its provider errors are words, not
// codes): the condition decides the window's error card, the message stays Hermes's.
var (
	reAuth     = regexp.MustCompile(`(?i)\b(401|403)\b|unauthori[sz]ed|invalid api key|incorrect api key|authentication|no api key|api key (is )?(missing|required)|no inference provider configured`)
	reRate     = regexp.MustCompile(`(?i)\b429\b|rate.?limit|too many requests`)
	reModel    = regexp.MustCompile(`(?i)model.{0,40}(not found|does not exist|unknown|not a valid)|unknown model|no such model`)
	reConnect  = regexp.MustCompile(`(?i)connection (refused|error)|could not connect|failed to connect|connecterror|name or service not known|timed out|unreachable`)
	reLoopback = regexp.MustCompile(`(?i)localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0`)
	reQuota    = regexp.MustCompile(`(?i)insufficient.?quota|quota exceeded|billing`)
	reContext  = regexp.MustCompile(`(?i)context.{0,20}(length|window).{0,40}(exceed|too long|too large)|maximum context length|context_length_exceeded`)
)

// classify maps a Hermes error message to our condition, keeping the message.
func classify(msg string) *protocol.Error {
	cond, code := protocol.CondProviderError, ""
	switch {
	case reQuota.MatchString(msg):
		cond, code = protocol.CondRateLimited, "insufficient_quota"
	case reContext.MatchString(msg):
		code = "context_length_exceeded"
	case reAuth.MatchString(msg):
		cond = protocol.CondCredentialMissing
	case reRate.MatchString(msg):
		cond = protocol.CondRateLimited
	case reModel.MatchString(msg):
		cond = protocol.CondModelNotFound
	case reConnect.MatchString(msg) && reLoopback.MatchString(msg):
		cond = protocol.CondLocalRuntimeUnavailable
	}
	e := protocol.NewError(0, cond, "Hermes: "+msg)
	e.Data.ProviderCode = code
	return e
}
