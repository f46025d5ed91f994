package app

import (
	"talaria/backend"
	"talaria/backend/store"
)

// Settings is bound to the window: the provider and its check, models and their
// settings, the chat preferences, and one chat's own settings and options.
type Settings struct{ app *App }

// GetSettings returns the settings (never the API key itself).
func (st *Settings) GetSettings() (backend.Settings, error) {
	s, err := st.app.service().Settings().GetSettings(st.app.bg())
	return s, userError(err)
}

// SaveSettings stores the settings; the API key goes to the system keychain.
func (st *Settings) SaveSettings(in backend.SettingsInput) (backend.Settings, error) {
	s, err := st.app.service().Settings().SaveSettings(st.app.bg(), in)
	return s, userError(err)
}

// CheckProvider tests the configured endpoint and lists its models.
func (st *Settings) CheckProvider() (backend.ProviderCheck, error) {
	c, err := st.app.service().Settings().CheckProvider(st.app.bg())
	return lists(c), userError(err)
}

// GetChatSettings returns what a chat's settings popover shows.
func (st *Settings) GetChatSettings(sessionID string) (backend.ChatSettings, error) {
	out, err := st.app.service().Settings().GetChatSettings(st.app.bg(), sessionID)
	return lists(out), chatError(err)
}

// SetChatModel sets a chat's own model ("" follows Settings).
func (st *Settings) SetChatModel(sessionID, model string) (store.Session, error) {
	out, err := st.app.service().Settings().SetChatModel(st.app.bg(), sessionID, model)
	return out, chatError(err)
}

// ModelInfo returns what is known of a model of the current provider ("" Settings').
func (st *Settings) ModelInfo(model string) (backend.ModelInfo, error) {
	out, err := st.app.service().Settings().ModelInfo(st.app.bg(), model)
	return out, chatError(err)
}

// SetModelSettings stores a model's context window and price as the user set them.
func (st *Settings) SetModelSettings(model string, ms backend.ModelSettings) (backend.ModelInfo, error) {
	out, err := st.app.service().Settings().SetModelSettings(st.app.bg(), model, ms)
	return out, chatError(err)
}

// GetChatPreferences returns the chat preferences of Settings (default custom
// instructions, when to summarise, how much of a text file to send).
func (st *Settings) GetChatPreferences() (backend.ChatPreferences, error) {
	out, err := st.app.service().Settings().GetChatPreferences(st.app.bg())
	return out, chatError(err)
}

// SaveChatPreferences stores the chat preferences of Settings.
func (st *Settings) SaveChatPreferences(p backend.ChatPreferences) (backend.ChatPreferences, error) {
	out, err := st.app.service().Settings().SaveChatPreferences(st.app.bg(), p)
	return out, chatError(err)
}

// GetChatOptions returns a chat's own options.
func (st *Settings) GetChatOptions(sessionID string) (backend.ChatOptions, error) {
	o, err := st.app.service().Settings().GetChatOptions(st.app.bg(), sessionID)
	return lists(o), userError(err)
}

// SetChatOptions replaces a chat's own options; they apply from its next turn.
func (st *Settings) SetChatOptions(sessionID string, o backend.ChatOptions) (store.Session, error) {
	s, err := st.app.service().Settings().SetChatOptions(st.app.bg(), sessionID, o)
	return s, userError(err)
}
