package backend

// The backend's areas: each area type holds the exported methods of one area of the
// app, over the same Service, and each of the window's bound services (app/) talks to
// its own area through the Service's accessor of the same name (svc.Chats(),
// svc.Turns(), ...). Service itself keeps only its lifecycle (Open, Start,
// WindowShown, Close) and these accessors (docs/architecture.md has the table).
// An area type is a handle: it holds no state of its own, so an accessor's result
// may be kept or fetched again at will.

// ChatsArea is the chats' area: the list of chats (make, rename, pin, archive, fork,
// duplicate, delete, search, export, import), drafts, transcripts, workspaces and the
// recovery report. app.Chats sits over it.
type ChatsArea struct{ s *Service }

// TurnsArea is the turns' area: sending, retrying, editing, compacting, cancelling a
// turn, its stream, the chat's title and figures, and steering. app.Turns sits over it.
type TurnsArea struct{ s *Service }

// ApprovalsArea is the approvals' area: pending approvals, clarify questions and vault
// requests and their answers, yolo, the session allowlist and the audit log.
// app.Approvals sits over it.
type ApprovalsArea struct{ s *Service }

// SettingsArea is the settings' area: the app's settings, provider checks, the chat's
// model, options and preferences, and what is known of the models. app.Settings sits
// over it.
type SettingsArea struct{ s *Service }

// AgentsArea is the agents' area: the sidecar's status, runtimes and their kinds,
// sandboxes and the Hermes agent. app.Agents sits over it.
type AgentsArea struct{ s *Service }

// ACPArea is the ACP agents' area: the configured agents, their state, choices,
// sign-in and sessions. app.ACP sits over it.
type ACPArea struct{ s *Service }

// MCPArea is the MCP servers' area: the configured servers, a chat's servers, their
// prompts and resources, and imports from other apps' configurations. app.MCP sits
// over it.
type MCPArea struct{ s *Service }

// AboutArea is the about and diagnostics area: the app's version and licences,
// diagnostics, autostart and the activity (what runs now, notices). app.About sits
// over it.
type AboutArea struct{ s *Service }

// Chats returns the chats' area.
func (s *Service) Chats() *ChatsArea { return &ChatsArea{s} }

// Turns returns the turns' area.
func (s *Service) Turns() *TurnsArea { return &TurnsArea{s} }

// Approvals returns the approvals' area.
func (s *Service) Approvals() *ApprovalsArea { return &ApprovalsArea{s} }

// Settings returns the settings' area.
func (s *Service) Settings() *SettingsArea { return &SettingsArea{s} }

// Agents returns the agents' area.
func (s *Service) Agents() *AgentsArea { return &AgentsArea{s} }

// ACP returns the ACP agents' area.
func (s *Service) ACP() *ACPArea { return &ACPArea{s} }

// MCP returns the MCP servers' area.
func (s *Service) MCP() *MCPArea { return &MCPArea{s} }

// About returns the about and diagnostics area.
func (s *Service) About() *AboutArea { return &AboutArea{s} }
