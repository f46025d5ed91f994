package gate

import "regexp"

// secretFieldName matches the names and titles of form fields that ask for a secret.
var secretFieldName = regexp.MustCompile(`(?i)(pass(word|phrase|wd)?|secret|token|api[ _-]?key|private[ _-]?key|credential|otp\b|\bpin\b)`)

// secretFieldDescription matches a field's description that asks for a key ("Paste
// your OpenAI API key"): narrower than secretFieldName, as a description says more.
var secretFieldDescription = regexp.MustCompile(`(?i)(pass(word|phrase)|(api|access|private|secret)[ _-]?key|bearer|token)`)

// SecretField reports whether a form field (an MCP or ACP elicitation's requested
// schema property: its name, title, description, JSON type, format and writeOnly)
// asks for a secret: a string whose format is "password", that is writeOnly (JSON
// Schema 2020-12, §9.4), whose name or title says password, passphrase, token, secret,
// API key, private key, credential, PIN or OTP, or whose description asks for a
// password, a key or a token. Such a value never goes on a question card,
// whose answers the chat keeps: the built-in runtime asks it on a vault card, the ACP
// runtime refuses the form.
func SecretField(name, title, description, typ, format string, writeOnly bool) bool {
	return typ == "string" && (format == "password" || writeOnly || secretFieldName.MatchString(name) || secretFieldName.MatchString(title) ||
		secretFieldDescription.MatchString(description))
}
