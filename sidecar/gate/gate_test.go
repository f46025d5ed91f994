package gate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
)

var confined = sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Workspace: "/w"}

func TestCheckRefusesHardlineWhateverElse(t *testing.T) {
	_, err := Check(Command{Text: "sudo mkfs.ext4 /dev/sdz9", Policy: confined, Escalate: EscalateFull, Sandbox: sandbox.Status{Available: true}})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.HasPrefix(err.Error(), "refused:") || !refused.Match.Hardline {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckEscalations(t *testing.T) {
	up := sandbox.Status{Available: true}
	plan, err := Check(Command{Text: "curl https://example.com", Policy: confined, Escalate: EscalateNetwork, Sandbox: up})
	if err != nil || !plan.Run.Network || len(plan.Asks) != 1 || plan.Asks[0].Key != protocol.PatternSandboxNetwork || plan.Asks[0].OnceOnly {
		t.Fatalf("network: %+v %v", plan, err)
	}
	plan, err = Check(Command{Text: "make", Policy: confined, Escalate: EscalateFull, Sandbox: up})
	if err != nil || plan.Run.Confined() || len(plan.Asks) != 1 || !plan.Asks[0].OnceOnly || plan.Asks[0].Sandbox != "outside the sandbox" {
		t.Fatalf("full: %+v %v", plan, err)
	}
	// Asked for what the policy allows already: nothing to ask.
	plan, err = Check(Command{Text: "make", Policy: confined, Escalate: EscalateWrite, Sandbox: up})
	if err != nil || len(plan.Asks) != 0 || plan.Run.Mode != sandbox.ModeWorkspaceWrite {
		t.Fatalf("write in a writable chat: %+v %v", plan, err)
	}
	_, err = Check(Command{Text: "make", Policy: confined, Escalate: "root", Sandbox: up})
	var bad *EscalateError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), `not "root"`) {
		t.Fatalf("unknown escalate: %v", err)
	}
	// No sandbox here: the danger pattern first, then the once-only unsandboxed ask.
	plan, err = Check(Command{Text: "rm -rf build", Policy: confined, Sandbox: sandbox.Status{Reason: "no bwrap"}})
	if err != nil || len(plan.Asks) != 2 || plan.Asks[0].Key != "recursive_delete" || plan.Asks[1].Key != protocol.PatternUnsandboxed ||
		!plan.Asks[1].OnceOnly || !strings.Contains(plan.Asks[1].Description, "no bwrap") || plan.Run.Confined() {
		t.Fatalf("unsandboxed: %+v %v", plan, err)
	}
}

func TestGrantRule(t *testing.T) {
	for _, c := range []struct {
		onceOnly, yolo, granted, listed bool
		want                            string
	}{
		{false, true, false, false, ByYolo},
		{true, true, false, false, ByYolo},
		{true, false, true, true, ""},
		{false, false, true, true, ByGrant},
		{false, false, false, true, ByAllowlist},
		{false, false, false, false, ""},
	} {
		if got := AllowedBy(c.onceOnly, c.yolo, c.granted, c.listed); got != c.want {
			t.Errorf("AllowedBy%+v = %q", c, got)
		}
	}
}

func TestOutcomesFailClosed(t *testing.T) {
	a := Ask{Key: "k", Description: "deletes things"}
	for _, o := range []Outcome{{}, {Reason: "answered"}, {Reason: protocol.ResolvedAnswered, Choice: "maybe"},
		{Reason: protocol.ResolvedAnswered, Choice: protocol.ChoiceDeny}, {Reason: protocol.ResolvedTimeout, Choice: protocol.ChoiceOnce},
		{Reason: protocol.ResolvedInterrupted}, {Reason: "error"}} {
		if o.Allows() || Denial(o, a, time.Minute) == "" {
			t.Errorf("%+v allows", o)
		}
	}
	for _, o := range []Outcome{{Reason: Auto}, {Reason: protocol.ResolvedYolo}, {Reason: protocol.ResolvedAnswered, Choice: protocol.ChoiceSession}} {
		if !o.Allows() || Denial(o, a, time.Minute) != "" {
			t.Errorf("%+v does not allow", o)
		}
	}
}

// script is an Asker answering from a list and recording what it was asked.
type script struct {
	answers []Outcome
	asked   []string
}

func (s *script) Ask(_ context.Context, _ string, a Ask) Outcome {
	s.asked = append(s.asked, a.Key)
	o := s.answers[0]
	s.answers = s.answers[1:]
	return o
}

func TestApproveStopsAtTheFirstNo(t *testing.T) {
	s := &script{answers: []Outcome{{Reason: Auto}, {Reason: protocol.ResolvedAnswered, Choice: protocol.ChoiceDeny}}}
	why := Approve(context.Background(), s, "x", []Ask{{Key: "a"}, {Key: "b", Description: "does b"}, {Key: "c"}}, time.Minute)
	if !strings.HasPrefix(why, "denied:") || !strings.Contains(why, "does b") || strings.Join(s.asked, ",") != "a,b" {
		t.Fatalf("why %q asked %v", why, s.asked)
	}
	if _, why, err := Run(context.Background(), nil, Command{Text: "rm -rf build", Policy: confined, Sandbox: sandbox.Status{Available: true}}, time.Minute); !errors.Is(err, ErrNoAsker) || why == "" {
		t.Fatalf("no asker: %q %v", why, err)
	}
}

func TestFrameSpanFollowsRedaction(t *testing.T) {
	red := tools.NewRedactor("s3cr3t-value")
	cmd := "curl -H s3cr3t-value && rm -rf build"
	a := Ask{Key: "recursive_delete", SpanStart: strings.Index(cmd, "rm"), SpanEnd: len(cmd), Sandbox: "x"}
	f := Frame("ap_1", cmd, a, red, time.Minute, "not an escalation")
	if strings.Contains(f.Command, "s3cr3t") || f.Command[f.SpanStart:f.SpanEnd] != "rm -rf build" || f.Justification != "" || f.TimeoutS != 60 {
		t.Fatalf("frame %+v", f)
	}
	f = Frame("ap_2", "make", Ask{Key: protocol.PatternSandboxFull, OnceOnly: true}, nil, time.Minute, " it needs s3cr3t-value ")
	if strings.Join(f.Choices, ",") != "once,deny" || f.Justification != "it needs s3cr3t-value" {
		t.Fatalf("frame %+v", f)
	}
}
