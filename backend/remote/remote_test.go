//go:build linux

package remote_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"talaria/backend/remote"
	"talaria/backend/remote/sshtest"
	"talaria/internal/testwait"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	t.Cleanup(cancel)
	return c
}

// Words with spaces, quotes, $ and globs reach the remote command as they were: the
// command line ssh sends is one string the remote shell splits again.
func TestQuotedWordsArriveIntact(t *testing.T) {
	srv := sshtest.Start(t)
	words := []string{"a b", "it's", `"dq"`, "$HOME", "*", "-n", "back\\slash", "ünï", ""}
	line, err := remote.Quote(append([]string{"printf", `%s|\n`}, words...))
	if err != nil {
		t.Fatal(err)
	}
	out, err := srv.SSH.Run(ctx(t), srv.Host("loop"), line, nil)
	if err != nil {
		t.Fatalf("run: %v\nsshd: %s", err, srv.Log())
	}
	if got, want := string(out), strings.Join(words, "|\n")+"|\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Probe finds the host's system and home; Install copies the binary once (checked by
// its sum), and a second Install with the same build copies nothing.
func TestProbeAndInstall(t *testing.T) {
	srv := sshtest.Start(t)
	h := srv.Host("loop")
	bin := filepath.Join(t.TempDir(), "talaria")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho remote sidecar \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := remote.FileSum(bin)
	if err != nil {
		t.Fatal(err)
	}
	p, err := srv.SSH.Probe(ctx(t), h, "9.9.9", sum, map[string]string{"shell": "sh", "nope": "no-such-agent-here"})
	if err != nil {
		t.Fatalf("probe: %v\nsshd: %s", err, srv.Log())
	}
	if p.OS != "Linux" || p.Home != srv.Home || !p.Supported() || p.Sidecar != "" {
		t.Fatalf("probe %+v", p)
	}
	if p.Agents["shell"] == "" || p.Agents["nope"] != "" {
		t.Fatalf("agents found: %v", p.Agents)
	}
	if err := srv.SSH.Install(ctx(t), h, p, bin, "9.9.9", sum); err != nil {
		t.Fatalf("install: %v", err)
	}
	installed := filepath.Join(srv.Home, remote.SidecarPath("9.9.9"))
	if got, err := remote.FileSum(installed); err != nil || got != sum {
		t.Fatalf("installed sum %q (%v), want %q", got, err, sum)
	}
	if out, err := srv.SSH.Run(ctx(t), h, "./"+remote.SidecarPath("9.9.9")+" hello", nil); err != nil || string(out) != "remote sidecar hello\n" {
		t.Fatalf("run installed: %q %v", out, err)
	}
	// A Hermes path under ~ is the login's home there.
	fake := filepath.Join(srv.Home, "hermes-venv", "bin")
	if err := os.MkdirAll(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "python"), []byte("#!/bin/sh\necho 0.19.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tilde := h
	tilde.Hermes = "~/hermes-venv/bin/python"
	if pt, err := srv.SSH.Probe(ctx(t), tilde, "9.9.9", sum, nil); err != nil || pt.HermesPython != filepath.Join(fake, "python") || pt.HermesVersion != "0.19.0" {
		t.Fatalf("probe with a Hermes path under ~: %+v %v", pt, err)
	}
	p2, err := srv.SSH.Probe(ctx(t), h, "9.9.9", sum, nil)
	if err != nil || p2.Sidecar != "current" {
		t.Fatalf("second probe: %+v %v", p2, err)
	}
	// Another build of the same version is outdated; a copy whose sum does not match
	// is refused and leaves the installed one in place, with no temporary file.
	other := filepath.Join(t.TempDir(), "talaria")
	if err := os.WriteFile(other, []byte("#!/bin/sh\necho other\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p3, err := srv.SSH.Probe(ctx(t), h, "9.9.9", "0123", nil)
	if err != nil || p3.Sidecar != "outdated" {
		t.Fatalf("probe of another build: %+v %v", p3, err)
	}
	err = srv.SSH.Install(ctx(t), h, p3, other, "9.9.9", strings.Repeat("ab", 32))
	var re *remote.Error
	if !errors.As(err, &re) || re.Code != remote.CodeRemote || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("install with a wrong sum: %v", err)
	}
	if got, _ := remote.FileSum(installed); got != sum {
		t.Fatalf("a refused copy replaced the installed sidecar")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(installed), ".talaria.*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// ssh's own failures become typed errors that say what to do; those that retrying
// cannot fix are Permanent.
func TestSSHFailuresAreTyped(t *testing.T) {
	srv := sshtest.Start(t)
	h := srv.Host("loop")
	run := func(c remote.SSH, h remote.Host) *remote.Error {
		t.Helper()
		_, err := c.Run(ctx(t), h, "true", nil)
		var re *remote.Error
		if !errors.As(err, &re) {
			t.Fatalf("error %v (%T), want *remote.Error", err, err)
		}
		if re.Hint() == "" {
			t.Fatalf("%v has no hint", re)
		}
		return re
	}
	withOpt := func(replace, with string) remote.SSH {
		c := srv.SSH
		c.Options = append([]string(nil), c.Options...)
		for i, o := range c.Options {
			if strings.HasPrefix(o, replace) {
				c.Options[i] = with
			}
		}
		return c
	}

	// A host key that differs from known_hosts.
	otherKey := filepath.Join(t.TempDir(), "k")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", otherKey).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	pub, _ := os.ReadFile(otherKey + ".pub")
	f := strings.Fields(string(pub))
	wrongKnown := filepath.Join(t.TempDir(), "known_hosts")
	line := "[127.0.0.1]:" + strconv.Itoa(srv.Port) + " " + f[0] + " " + f[1] + "\n"
	if err := os.WriteFile(wrongKnown, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	if e := run(withOpt("UserKnownHostsFile=", "UserKnownHostsFile="+wrongKnown), h); e.Code != remote.CodeHostKeyChanged || !e.Permanent() {
		t.Fatalf("changed key: %v (%s)", e, e.Code)
	}
	// No key known at all (BatchMode: ssh cannot ask).
	if e := run(withOpt("UserKnownHostsFile=", "UserKnownHostsFile=/dev/null"), h); e.Code != remote.CodeHostKeyUnknown || !e.Permanent() {
		t.Fatalf("unknown key: %v (%s)", e, e.Code)
	}
	// A key the host does not accept.
	stranger := h
	stranger.IdentityFile = otherKey
	if e := run(srv.SSH, stranger); e.Code != remote.CodeAuth || !e.Permanent() {
		t.Fatalf("refused key: %v (%s)", e, e.Code)
	}
	// Nothing listens (port 1 of the loopback).
	closed := h
	closed.Port = 1
	if e := run(srv.SSH, closed); e.Code != remote.CodeUnreachable || e.Permanent() {
		t.Fatalf("closed port: %v (%s)", e, e.Code)
	}
	// The command's own failure is not ssh's.
	_, err := srv.SSH.Run(ctx(t), h, "echo broken >&2; exit 7", nil)
	var re *remote.Error
	if !errors.As(err, &re) || re.Code != remote.CodeRemote || !strings.Contains(re.Detail, "exit status 7: broken") {
		t.Fatalf("remote failure: %v", err)
	}
}

func TestHostValidation(t *testing.T) {
	good := remote.Host{Name: "home-server", Target: "me@home.example", Port: 2222}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []remote.Host{
		{Name: "", Target: "x"},
		{Name: "a b", Target: "x"},
		{Name: "ok", Target: "-oProxyCommand=touch /tmp/pwned"},
		{Name: "ok", Target: "host; rm -rf ~"},
		{Name: "ok", Target: "x", Port: 70000},
		{Name: "ok", Target: "x", IdentityFile: "a\nb"},
		{Name: "ok", Target: "x", Hermes: "/opt/hermes\x1b[2K/bin/python"},
		{Name: "ok", Target: "x", Hermes: "/opt/her\u200bmes/bin/python"},
		{Name: "ok", Target: "x", Hermes: "/opt/\u202ehermes"},
		{Name: "ok", Target: "x", Hermes: "/opt/\xffhermes"},
	} {
		var fe *remote.FieldError
		if err := bad.Validate(); !errors.As(err, &fe) {
			t.Errorf("%+v: %v, want a *FieldError", bad, err)
		}
	}
}

// A hostile value in a field that reaches the remote shell (the Hermes path) is a
// word, never a command: nothing it names runs.
func TestHostileFieldsRunNothing(t *testing.T) {
	srv := sshtest.Start(t)
	marker := filepath.Join(srv.Home, "pwned")
	for _, v := range []string{"$(touch " + marker + ")", "`touch " + marker + "`", "x; touch " + marker, "'; touch " + marker + "; '"} {
		h := srv.Host("loop")
		h.Hermes = v
		if err := h.Validate(); err != nil {
			continue // refused outright is fine too
		}
		p, err := srv.SSH.Probe(ctx(t), h, "1.0", strings.Repeat("0", 64), map[string]string{"x": "sh"})
		if err != nil {
			t.Fatalf("probe with hermes %q: %v", v, err)
		}
		if p.HermesPython != "" {
			t.Errorf("hermes %q was taken for a Python: %+v", v, p)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("hermes %q ran a command on the host", v)
		}
	}
}

// SidecarBinary finds talaria-sidecar where builds and installs put it: beside the app
// as <app>-sidecar (a build folder), as talaria-sidecar.exe beside talaria.exe, and in
// ../lib/talaria/ (an install); else the app itself, and never a file it cannot run.
func TestSidecarBinaryFindsTheSidecarBesideTheApp(t *testing.T) {
	dir := t.TempDir()
	put := func(p string, mode os.FileMode) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	app := put(filepath.Join(dir, "build", "talaria"), 0o755)
	if got := remote.SidecarBinary(app); got != app {
		t.Errorf("with nothing beside it: %q, want the app itself", got)
	}
	put(app+"-sidecar", 0o644)
	if got := remote.SidecarBinary(app); got != app {
		t.Errorf("beside a talaria-sidecar that cannot run: %q, want the app itself", got)
	}
	if err := os.Chmod(app+"-sidecar", 0o755); err != nil {
		t.Fatal(err)
	}
	if got := remote.SidecarBinary(app); got != app+"-sidecar" {
		t.Errorf("build folder: %q", got)
	}
	exe := put(filepath.Join(dir, "win", "talaria.exe"), 0o755)
	side := put(filepath.Join(dir, "win", "talaria-sidecar.exe"), 0o755)
	if got := remote.SidecarBinary(exe); got != side {
		t.Errorf("Windows: %q, want %q", got, side)
	}
	installed := put(filepath.Join(dir, "usr", "bin", "talaria"), 0o755)
	lib := put(filepath.Join(dir, "usr", "lib", "talaria", "talaria-sidecar"), 0o755)
	if got := remote.SidecarBinary(installed); got != lib {
		t.Errorf("install: %q, want %q", got, lib)
	}
}
