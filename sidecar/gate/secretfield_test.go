package gate

import "testing"

// TestSecretField: the fields a form may use to ask for a secret, strings and numbers,
// named in snake or camel case; and ordinary fields that only look alike.
func TestSecretField(t *testing.T) {
	type f struct{ name, title, desc, typ, format string }
	secret := []f{
		{name: "password", typ: "string"},
		{name: "x", typ: "string", format: "password"},
		{name: "GITHUB_TOKEN", typ: "string"},
		{name: "apiKey", typ: "string"},
		{name: "key", desc: "Paste your OpenAI API key", typ: "string"},
		{name: "pin", typ: "integer"},
		{name: "user_pin", typ: "string"},
		{name: "userPin", typ: "number"},
		{name: "otp_code", typ: "integer"},
		{name: "mfaCode", typ: "integer"},
		{name: "code", title: "Verification code", typ: "integer"},
		{name: "code", desc: "The 6-digit code from your authenticator app", typ: "integer"},
		{name: "cvv", typ: "integer"},
		{name: "passcode", typ: "string"},
	}
	for _, c := range secret {
		if !SecretField(c.name, c.title, c.desc, c.typ, c.format, false) {
			t.Errorf("%+v is not taken for a secret", c)
		}
	}
	if !SecretField("n", "", "", "integer", "", true) {
		t.Error("a writeOnly number is not taken for a secret")
	}
	plain := []f{
		{name: "pinned", typ: "boolean"},
		{name: "spin_count", typ: "integer"},
		{name: "count", title: "How many", typ: "integer"},
		{name: "zip", typ: "string"},
		{name: "pinned_version", typ: "string"},
		{name: "token_limit", typ: "integer"}, // a number named token is a count, not a token
		{name: "description", typ: "string"},
		{name: "integer", title: "Integer", desc: "Your favorite integer (do not give us your phone number, pin, or other sensitive info)", typ: "integer"},
	}
	for _, c := range plain {
		if SecretField(c.name, c.title, c.desc, c.typ, c.format, false) {
			t.Errorf("%+v is taken for a secret", c)
		}
	}
}
