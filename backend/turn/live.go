package turn

import "sort"

// LiveInfo describes one turn running in this process.
type LiveInfo struct {
	SessionID string `json:"session_id"`
	StreamID  string `json:"stream_id"`
	StartedAt int64  `json:"started_at"` // epoch milliseconds when the turn was admitted
}

// LiveStreams lists the turns running in this process, oldest first (ties by stream
// id). A turn leaves the list once it has settled and sent stream_end.
func (r *Runner) LiveStreams() []LiveInfo {
	r.mu.Lock()
	out := make([]LiveInfo, 0, len(r.live))
	for _, rn := range r.live {
		out = append(out, LiveInfo{SessionID: rn.sessionID, StreamID: rn.streamID, StartedAt: rn.started.UnixMilli()})
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].StartedAt != out[j].StartedAt {
			return out[i].StartedAt < out[j].StartedAt
		}
		return out[i].StreamID < out[j].StreamID
	})
	return out
}
