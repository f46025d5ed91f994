package protocol

// LinkStatusPrefix starts the stderr lines through which `talaria sidecar link` (the
// command that reaches a sidecar on another machine through ssh: docs/remote.md) tells
// the host the state of its connection. The rest of the line is one of LinkReconnecting
// and LinkConnected. They are stderr lines, not frames: the link speaks them while the
// sidecar itself cannot be heard.
const LinkStatusPrefix = "talaria-link-status: "

// The states a link reports after LinkStatusPrefix.
const (
	// LinkReconnecting: the connection dropped; the link is running ssh again (the
	// sidecar and its turn go on there, their output kept for the reconnect).
	LinkReconnecting = "reconnecting"
	// LinkConnected: the connection is back; what was kept follows.
	LinkConnected = "connected"
)
