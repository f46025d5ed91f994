package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/internal/testwait"
	"talaria/sidecar/builtin"
	"talaria/sidecar/builtin/danger"
	"talaria/sidecar/gate"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestOneGateForBothRuntimes: the built-in runtime's terminal tool and an ACP agent's
// terminal/create go through the one approval gate (package gate): the same hardline
// command is refused with the gate's own words by both, the same dangerous command
// gets the same approval card from both, and the same deny gives both agents the same
// message; neither command runs.
func TestOneGateForBothRuntimes(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	// A mkfs.ext4 that only leaves a mark: a hardline command that wrongly ran is seen.
	bin := t.TempDir()
	mark := filepath.Join(bin, "ran")
	os.WriteFile(filepath.Join(bin, "mkfs.ext4"), []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	const hard, risky = "mkfs.ext4 /dev/sdz9", "rm -rf build"
	matches := danger.Check(hard)
	if len(matches) == 0 || !matches[0].Hardline {
		t.Fatalf("%q is no hardline command: %+v", hard, matches)
	}
	refusal := (&gate.RefusedError{Match: matches[0]}).Error()

	// The built-in runtime: a scripted model calls terminal with both commands.
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("c1", "terminal", map[string]any{"command": hard})),
		providertest.CallTurn("", providertest.Call("c2", "terminal", map[string]any{"command": risky})),
		providertest.TextTurn("done"),
	)
	rt := builtin.New(builtin.Options{})
	// The frameLog of the ACP tests serves the built-in runtime too (its emit is the same).
	bf := &frameLog{ch: make(chan sentFrame, 256)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type chatEnd struct {
		res protocol.ChatResult
		err error
	}
	ended := make(chan chatEnd, 1)
	go func() {
		res, err := rt.Chat(ctx, protocol.ChatStartParams{SessionID: "b1", StreamID: "st-b1", Workspace: ws, Model: "scripted-model",
			Provider: protocol.Provider{Name: "Scripted", BaseURL: p.BaseURL()}, UserMessage: "go",
			ApprovalTimeoutS: int(testwait.Timeout / time.Second)}, bf.emit)
		ended <- chatEnd{res, err}
	}()
	var auto protocol.ApprovalAutoData
	json.Unmarshal(bf.next(t, protocol.EvApprovalAuto).Data, &auto)
	if auto.Decision != protocol.AutoRefused || auto.Pattern != matches[0].Key {
		t.Fatalf("built-in hardline frame %+v", auto)
	}
	var builtinCard protocol.ApprovalData
	json.Unmarshal(bf.next(t, protocol.EvApproval).Data, &builtinCard)
	if ok, err := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "b1", ApprovalID: builtinCard.ApprovalID, Choice: protocol.ChoiceDeny}); err != nil || !ok.OK {
		t.Fatalf("built-in approval.respond: %+v %v", ok, err)
	}
	var end chatEnd
	select {
	case end = <-ended:
	case <-time.After(testwait.Timeout):
		t.Fatalf("the built-in chat did not end within %v", testwait.Timeout)
	}
	if end.err != nil {
		t.Fatal(end.err)
	}
	var builtinErrs []string
	for _, m := range end.res.Messages {
		if m.Role == "tool" {
			var r struct {
				Error string `json:"error"`
			}
			json.Unmarshal([]byte(m.Content), &r)
			builtinErrs = append(builtinErrs, r.Error)
		}
	}
	if len(builtinErrs) != 2 {
		t.Fatalf("built-in tool rows: %q", builtinErrs)
	}

	// The ACP runtime: the agent asks terminal/create for the same commands.
	c, tr, log := clientWithTurn(t, ws)
	tr.policy, _ = policyFor(protocol.ChatStartParams{Workspace: ws})
	_, err := c.CreateTerminal(context.Background(), sdk.CreateTerminalRequest{SessionId: "acp-1", Command: hard})
	if err == nil {
		t.Fatal("ACP: the hardline command was not refused")
	}
	acpRefusal := err.Error()
	denied := make(chan error, 1)
	go func() {
		_, err := c.CreateTerminal(context.Background(), sdk.CreateTerminalRequest{SessionId: "acp-1", Command: risky})
		denied <- err
	}()
	var acpCard protocol.ApprovalData
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &acpCard)
	if ok, err := tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: acpCard.ApprovalID, Choice: protocol.ChoiceDeny}); err != nil || !ok.OK {
		t.Fatalf("ACP approval.respond: %+v %v", ok, err)
	}
	acpDenial := <-denied

	// One gate: the same words and the same card.
	if builtinErrs[0] != refusal || !strings.Contains(acpRefusal, refusal) {
		t.Errorf("hardline refusals differ from the gate's %q:\nbuilt-in %q\nACP      %q", refusal, builtinErrs[0], acpRefusal)
	}
	if acpDenial == nil || !strings.HasPrefix(builtinErrs[1], "denied:") || !strings.Contains(acpDenial.Error(), builtinErrs[1]) {
		t.Errorf("denials differ:\nbuilt-in %q\nACP      %v", builtinErrs[1], acpDenial)
	}
	builtinCard.ApprovalID, acpCard.ApprovalID = "", ""
	if builtinCard.Pattern != "recursive_delete" || builtinCard.SpanEnd == 0 {
		t.Errorf("built-in card %+v", builtinCard)
	}
	b1, _ := json.Marshal(builtinCard)
	b2, _ := json.Marshal(acpCard)
	if string(b1) != string(b2) {
		t.Errorf("approval cards differ:\nbuilt-in %s\nACP      %s", b1, b2)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the hardline command ran")
	}
	if _, err := os.Stat(filepath.Join(ws, "build")); err != nil {
		t.Error("the denied command ran")
	}
}
