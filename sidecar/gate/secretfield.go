package gate

import "regexp"

// secretFieldName matches the names and titles of form fields that ask for a secret.
var secretFieldName = regexp.MustCompile(`(?i)(pass(word|phrase|wd)?|secret|token|api[ _-]?key|private[ _-]?key|credential)`)

// secretCodeName matches the names and titles of fields that ask for a code that proves
// who the user is (a PIN, a one-time or verification code, a card's CVV), as a whole
// word: "pin", "user_pin", "otp_code", "mfaCode" (after splitWords), not "pinned" or
// "spin".
var secretCodeName = regexp.MustCompile(`(?i)((^|[^a-z])(pin|otp|totp|hotp|passcode|mfa|2fa|cvv|cvc)([^a-z]|$)|one[ _-]?time|verification[ _-]?code|security[ _-]?code|auth(entication)?[ _-]?code)`)

// secretFieldDescription matches a field's description that asks for a key ("Paste
// your OpenAI API key") or a code ("the 6-digit code from your authenticator app"):
// narrower than the name patterns, as a description says more.
// A bare "PIN" is not enough there: "do not give us your phone number, pin, or other
// sensitive info" describes an ordinary field (MCP's server-everything).
var secretFieldDescription = regexp.MustCompile(`(?i)(pass(word|phrase|code)|(api|access|private|secret)[ _-]?key|bearer|token|one[ -]time|verification code|security code|authenticator app|two[ -]factor|\b2fa\b)`)

// camelBoundary finds a lower-case letter or digit followed by an upper-case one.
var camelBoundary = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// splitWords puts an underscore at each camelCase boundary ("userPin" is "user_Pin"),
// so the word patterns see a field's name as its words.
func splitWords(s string) string { return camelBoundary.ReplaceAllString(s, "${1}_${2}") }

// SecretField reports whether a form field (an MCP or ACP elicitation's requested
// schema property: its name, title, description, JSON type, format and writeOnly)
// asks for a secret: a string whose format is "password", or a string or a number
// (integer, number) that is writeOnly (JSON Schema 2020-12, §9.4), whose name or title
// says password, passphrase, token, secret, API key, private key, credential, PIN, OTP,
// one-time, verification or security code (a number: only the codes), or whose
// description asks for a password, a key, a token or such a code. Such a value never
// goes on a question card, whose answers the chat keeps: the built-in runtime asks it
// on a vault card, the ACP runtime refuses the form.
func SecretField(name, title, description, typ, format string, writeOnly bool) bool {
	name, title = splitWords(name), splitWords(title)
	code := secretCodeName.MatchString(name) || secretCodeName.MatchString(title) || secretFieldDescription.MatchString(description)
	switch typ {
	case "string":
		return format == "password" || writeOnly || code || secretFieldName.MatchString(name) || secretFieldName.MatchString(title)
	case "integer", "number":
		return writeOnly || code
	}
	return false
}
