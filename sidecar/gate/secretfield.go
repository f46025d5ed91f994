package gate

import "regexp"

// secretFieldName matches the names and titles of form fields that ask for a secret.
var secretFieldName = regexp.MustCompile(`(?i)(pass(word|phrase|wd)?|secret|token|api[ _-]?key|private[ _-]?key|credential|otp\b|\bpin\b)`)

// SecretField reports whether a form field (an MCP or ACP elicitation's requested
// schema property: its name, title, JSON type, format and writeOnly) asks for a
// secret: a string whose format is "password", that is writeOnly (JSON Schema 2020-12,
// §9.4), or whose name or title says password, passphrase, token, secret, API key,
// private key, credential, PIN or OTP. Such a value never goes on a question card,
// whose answers the chat keeps: the built-in runtime asks it on a vault card, the ACP
// runtime refuses the form.
func SecretField(name, title, typ, format string, writeOnly bool) bool {
	return typ == "string" && (format == "password" || writeOnly || secretFieldName.MatchString(name) || secretFieldName.MatchString(title))
}
