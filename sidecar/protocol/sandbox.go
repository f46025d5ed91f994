package protocol

import "talaria/sidecar/protocol/redact"

// Sandbox policies (docs/protocol.md "Sandbox", docs/sandbox.md): how the commands of a
// session are confined. The host sends one with every chat.start.

// Sandbox modes of SandboxPolicy.Mode.
const (
	SandboxReadOnly       = "read-only"       // nothing writable but a private /tmp
	SandboxWorkspaceWrite = "workspace-write" // the workspace writable (the default)
	SandboxFullAccess     = "full-access"     // no confinement: explicit, per session
)

// SandboxPolicy is chat.start's sandbox. Mode is one of the Sandbox* modes ("" means
// workspace-write); Network lets commands reach the network (always on in full access);
// WritablePaths are further absolute folders writable in workspace-write mode;
// HiddenPaths are absolute paths commands and file tools never see, in every mode (the
// host sends its data folder). The runtime hides the user's secret stores (~/.ssh,
// keyrings, browser profiles ...) on top in the confined modes.
type SandboxPolicy struct {
	Mode          string   `json:"mode,omitempty" ts:"SandboxMode"`
	Network       bool     `json:"network,omitempty"`
	WritablePaths []string `json:"writable_paths,omitempty"`
	HiddenPaths   []string `json:"hidden_paths,omitempty"`
}

// Approval patterns of leaving the sandbox. They are not rows of the dangerous-command
// table: the runtime asks them when a command needs more than the session's policy
// allows, or when no sandbox is available at all.
const (
	PatternSandboxNetwork = "sandbox_network" // one command with network access
	PatternSandboxWrite   = "sandbox_write"   // a write in a read-only session
	PatternSandboxFull    = "sandbox_full"    // one command outside the sandbox
	PatternUnsandboxed    = "unsandboxed"     // no sandbox here: the command would run unconfined
	// PatternAgentOwn is an approval_auto's pattern for an action an ACP agent ran with
	// its own tools without asking (decided_by "agent"): its edit, deletion, move or
	// command, outside Talaria's sandbox and approvals.
	PatternAgentOwn = "agent_own"
)

// SandboxStatus is rpc.hello's sandbox: whether the runtime can confine commands here.
// Mechanism names what confines them (e.g. "bubblewrap 0.8.0"); when Available is
// false, Reason says why and Hint what the user can do, and every command asks.
//
// Agent is set by a runtime whose agent runs its own tools itself (the ACP runtime:
// Available false, Mechanism "acp"): the agent's name. Then only what the agent asks
// of Talaria is confined and approved: its file reads and writes (fs/*, inside the
// workspace under the chat's policy) and the commands it runs in Talaria's terminal
// (terminal/*, confined by TerminalMechanism, or, when that is "", each asking before
// it runs unconfined). What it runs with its own tools it approves by its own rules.
type SandboxStatus struct {
	Available         bool   `json:"available"`
	Mechanism         string `json:"mechanism,omitempty"`
	Reason            string `json:"reason,omitempty"`
	Hint              string `json:"hint,omitempty"`
	Agent             string `json:"agent,omitempty"`
	TerminalMechanism string `json:"terminal_mechanism,omitempty"`
}

// Redaction is chat.start's redaction: what the host knows of secrets it may no longer
// hold in clear (docs/protocol.md "Redaction"). Key is the fingerprint key (32 bytes,
// base64 in JSON; it never leaves the processes' memory), KeyID names it, Fingerprints
// are keyed fingerprints of every form of every secret the host was given (API keys,
// vault answers, in this run or an earlier one). The runtime redacts each of them from
// every tool output, frame and row, like the secrets it holds itself.
type Redaction struct {
	KeyID        string               `json:"key_id"`
	Key          []byte               `json:"key"`
	Fingerprints []redact.Fingerprint `json:"fingerprints"`
}
