package backend

import "talaria/backend/bus"

// EventAgentNotice tells the window something an agent did not do, without failing
// what the user did: payload AgentNotice. Today: an ACP agent that advertises
// session/delete refused or failed to delete a deleted chat's agent session (the chat
// is deleted all the same; Core.EvictDeleted).
const EventAgentNotice = "agent_notice"

// AgentNotice is EventAgentNotice's payload: the chat it is about (it may be gone) and
// the sentence to show, which names the agent and quotes its words.
type AgentNotice struct {
	SessionID string `json:"session_id"`
	Message   string `json:"message"`
}

// noticeAgent publishes an AgentNotice.
func (s *Service) noticeAgent(sessionID, message string) {
	s.Bus.Publish(bus.Event{Name: EventAgentNotice, Payload: AgentNotice{SessionID: sessionID, Message: message}})
}
