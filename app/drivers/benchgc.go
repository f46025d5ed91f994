package drivers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/websocket"
)

// benchInspector is a connection to WebKit's remote inspector (the server WebKitGTK
// opens at WEBKIT_INSPECTOR_HTTP_SERVER=host:port), used by the memory benchmark for
// what the page cannot do itself in a release WebKitGTK: a full garbage collection
// (Heap.gc) and the JavaScript heap's size (Heap.snapshot). Protocol: WebKit's
// Source/JavaScriptCore/inspector/protocol/Heap.json and Target.json; commands for
// the page go through Target.sendMessageToTarget.
type benchInspector struct {
	ws     *websocket.Conn
	target string
	nextID int
}

var inspectorSocket = regexp.MustCompile(`socket/\d+/\d+/WebPage`)

// dialBenchInspector connects to the inspector server at addr (host:port) and waits
// up to 10 s for the page's target. Errors: no server, no page listed, no target.
func dialBenchInspector(addr string) (*benchInspector, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	var path string
	for deadline := time.Now().Add(10 * time.Second); path == "" && time.Now().Before(deadline); {
		if resp, err := c.Get("http://" + addr + "/"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			path = inspectorSocket.FindString(string(b))
		}
		if path == "" {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if path == "" {
		return nil, fmt.Errorf("bench: no page at the inspector server %s", addr)
	}
	ws, err := websocket.Dial("ws://"+addr+"/"+path, "", "http://"+addr)
	if err != nil {
		return nil, fmt.Errorf("bench: inspector: %w", err)
	}
	ws.MaxPayloadBytes = 256 << 20 // heap snapshots
	in := &benchInspector{ws: ws}
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for in.target == "" {
		var m struct {
			Method string `json:"method"`
			Params struct {
				TargetInfo struct {
					TargetID string `json:"targetId"`
				} `json:"targetInfo"`
			} `json:"params"`
		}
		if err := websocket.JSON.Receive(ws, &m); err != nil {
			ws.Close()
			return nil, fmt.Errorf("bench: inspector: no page target: %w", err)
		}
		if m.Method == "Target.targetCreated" {
			in.target = m.Params.TargetInfo.TargetID
		}
	}
	return in, nil
}

// call sends method to the page and returns its result (raw JSON), skipping events.
// Errors: the connection's, or the protocol error the page answered with.
func (in *benchInspector) call(method string, timeout time.Duration) (json.RawMessage, error) {
	in.nextID++
	id := in.nextID
	inner, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": map[string]any{}})
	outer := map[string]any{"id": id, "method": "Target.sendMessageToTarget",
		"params": map[string]any{"targetId": in.target, "message": string(inner)}}
	if err := websocket.JSON.Send(in.ws, outer); err != nil {
		return nil, err
	}
	_ = in.ws.SetReadDeadline(time.Now().Add(timeout))
	for {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Message string `json:"message"`
			} `json:"params"`
		}
		if err := websocket.JSON.Receive(in.ws, &m); err != nil {
			return nil, fmt.Errorf("bench: inspector %s: %w", method, err)
		}
		if m.Method != "Target.dispatchMessageFromTarget" {
			continue
		}
		var r struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(m.Params.Message), &r) != nil || r.ID != id {
			continue // an event, or another command's answer
		}
		if r.Error != nil {
			return nil, fmt.Errorf("bench: inspector %s: %s", method, r.Error.Message)
		}
		return r.Result, nil
	}
}

// gc runs a full collection of the page's JavaScript heap (Heap.gc answers once it
// is done).
func (in *benchInspector) gc() error {
	_, err := in.call("Heap.gc", 30*time.Second)
	return err
}

// heapClass is what one class of object takes in a heap snapshot.
type heapClass struct {
	Bytes int64 `json:"bytes"`
	Count int64 `json:"count"`
}

// heapBytes returns the live size of the page's JavaScript heap in bytes, the sum of
// the node sizes of a Heap.snapshot (its nodes are [id, size, class, flags] groups),
// and that size per class name.
func (in *benchInspector) heapBytes() (int64, map[string]heapClass, error) {
	data, err := in.snapshot()
	if err != nil {
		return 0, nil, err
	}
	var snap struct {
		Nodes      []int64  `json:"nodes"`
		ClassNames []string `json:"nodeClassNames"`
	}
	if err := json.NewDecoder(strings.NewReader(data)).Decode(&snap); err != nil {
		return 0, nil, err
	}
	if len(snap.Nodes)%4 != 0 {
		return 0, nil, errors.New("bench: a heap snapshot of an unknown shape")
	}
	var total int64
	classes := map[string]heapClass{}
	for i := 0; i+3 < len(snap.Nodes); i += 4 {
		size, ci := snap.Nodes[i+1], snap.Nodes[i+2]
		total += size
		name := "?"
		if ci >= 0 && int(ci) < len(snap.ClassNames) {
			name = snap.ClassNames[ci]
		}
		c := classes[name]
		c.Bytes += size
		c.Count++
		classes[name] = c
	}
	return total, classes, nil
}

// snapshot returns a Heap.snapshot of the page (its JSON, WebKit's Inspector format).
func (in *benchInspector) snapshot() (string, error) {
	raw, err := in.call("Heap.snapshot", 60*time.Second)
	if err != nil {
		return "", err
	}
	// The heap agent keeps every snapshot it took, for an inspector to browse, until
	// the domain is disabled (WebKit's InspectorHeapAgent::disable clears them):
	// enabling then disabling it drops this one, so it is not counted as the page's.
	_, _ = in.call("Heap.enable", 10*time.Second)
	_, _ = in.call("Heap.disable", 10*time.Second)
	var r struct {
		SnapshotData string `json:"snapshotData"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", err
	}
	return r.SnapshotData, nil
}

// heapGrowth lists the classes that grew most from before to after, by bytes (at most
// n), as "class: +bytes (+count)".
func heapGrowth(before, after map[string]heapClass, n int) []string {
	type d struct {
		name         string
		bytes, count int64
	}
	var ds []d
	for k, a := range after {
		b := before[k]
		if a.Bytes > b.Bytes {
			ds = append(ds, d{k, a.Bytes - b.Bytes, a.Count - b.Count})
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].bytes > ds[j].bytes })
	var out []string
	for i := 0; i < len(ds) && i < n; i++ {
		out = append(out, fmt.Sprintf("%s: %+d bytes (%+d)", ds[i].name, ds[i].bytes, ds[i].count))
	}
	return out
}

func (in *benchInspector) close() { _ = in.ws.Close() }
