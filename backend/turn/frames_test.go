package turn

import (
	"testing"

	"talaria/backend/bus"
	"talaria/sidecar/protocol"
)

// Only the frames that grow a live answer may wait in the window's batcher; an approval,
// a tool call, the agent's state or the stream's end must not.
func TestStreamingFrame(t *testing.T) {
	for _, ev := range []string{protocol.EvToken, protocol.EvReasoning, protocol.EvUsage, protocol.EvMetering} {
		if !StreamingFrame(bus.Event{Name: bus.EventFrame, Payload: Frame{Event: ev}}) {
			t.Errorf("%s: want a frame that waits", ev)
		}
	}
	for _, ev := range []string{protocol.EvApproval, protocol.EvClarify, protocol.EvTool, protocol.EvToolComplete,
		protocol.EvAgentState, protocol.EvStreamEnd, protocol.EvCancel, protocol.EvStatus, protocol.EvUserMessage} {
		if StreamingFrame(bus.Event{Name: bus.EventFrame, Payload: Frame{Event: ev}}) {
			t.Errorf("%s: must go at once", ev)
		}
	}
	if StreamingFrame(bus.Event{Name: bus.EventFrame, Payload: "token"}) || StreamingFrame(bus.Event{Name: bus.EventSessionsChanged}) {
		t.Error("an event that is not a Frame must go at once")
	}
}
