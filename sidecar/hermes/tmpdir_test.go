//go:build linux

package hermes_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"talaria/internal/testproc"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/providertest"
)

// Hermes's terminal tool writes a snapshot of its whole environment (secrets included)
// to $TMPDIR/hermes-snap-<id>.sh and deletes it only in its own cleanup, which never
// runs when the gateway is killed. Each gateway the runtime starts gets a private
// TMPDIR (os.TempDir()/talaria-hermes-<sidecar pid>-*, 0700), preferred over the one it
// inherits, removed when the gateway has exited: killed (and restarted, with a fresh
// folder) or closed with the runtime. Nothing of Hermes's snapshots stays behind.
func TestGatewayTempDirAgainstRealHermes(t *testing.T) {
	for _, in := range hermestest.All(t) {
		t.Run(in.Name, func(t *testing.T) {
			// The folder the sidecar inherits as TMPDIR: without a private one the
			// snapshots would land here.
			inherited := t.TempDir()
			t.Setenv("TMPDIR", inherited)
			secret := fmt.Sprintf("tmpdir-test-secret-%d", time.Now().UnixNano())
			t.Setenv("TALARIA_TMPDIR_TEST_SECRET", secret)

			r := newRig(t, in, nil)
			turn := func(stream, call string) string {
				t.Helper()
				r.provider.Enqueue(providertest.CallTurn("Looking.", providertest.Call(call, "terminal",
					map[string]any{"command": `echo "tmpdir=[$TMPDIR]"`})), providertest.TextTurn("Done."))
				id, ch := r.start("chat.start", r.chatParams("s1", stream, "where are temporary files?"))
				if res := resultOf(t, waitReply(t, ch)); res.FinalResponse != "Done." {
					t.Fatalf("result %+v\nframes:\n%s", res, r.describe(id))
				}
				tc := r.frameOf(id, "tool_complete")
				m := regexp.MustCompile(`tmpdir=\[([^\]]*)\]`).FindSubmatch(tc)
				if m == nil {
					t.Fatalf("the command's output has no tmpdir: %s", tc)
				}
				return string(m[1])
			}
			private := func(dir string) {
				t.Helper()
				want := regexp.MustCompile(`^talaria-hermes-` + strconv.Itoa(os.Getpid()) + `-[0-9]+$`)
				if filepath.Dir(dir) != filepath.Clean(inherited) || !want.MatchString(filepath.Base(dir)) {
					t.Fatalf("the gateway's TMPDIR is %q, not a private talaria-hermes-%d-* folder in %s", dir, os.Getpid(), inherited)
				}
				st, err := os.Stat(dir)
				if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
					t.Fatalf("the private TMPDIR %s: %v %v", dir, st, err)
				}
				snaps, _ := filepath.Glob(filepath.Join(dir, "hermes-snap-*.sh"))
				if len(snaps) == 0 {
					t.Fatalf("no hermes-snap-*.sh in %s while the gateway lives", dir)
				}
				b, err := os.ReadFile(snaps[0])
				if err != nil || !bytes.Contains(b, []byte(secret)) {
					t.Errorf("the snapshot %s does not hold the environment's secret (err %v)", snaps[0], err)
				}
			}
			gone := func(dir, when string) {
				t.Helper()
				testwait.For(t, when+": the gateway's private TMPDIR "+dir+" to go", func() bool {
					_, err := os.Lstat(dir)
					return os.IsNotExist(err)
				})
			}

			// A live gateway: its terminal's snapshot is in its private folder.
			first := turn("st_1", "c1")
			private(first)

			// The gateway killed with its process group (what the supervisor does): its
			// folder goes once it has exited; the restarted gateway gets a fresh one.
			pid := gatewayWithEnv(t, "TMPDIR="+first)
			if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
				t.Fatalf("killing the gateway's process group %d: %v", pid, err)
			}
			gone(first, "after the gateway was killed")
			// The folder goes before the runtime learns the gateway exited; the next
			// turn is sent once it has (a new gateway runs): sent before, it would be
			// given the dying gateway and fail ("send the message again").
			testwait.For(t, "the restarted gateway", func() bool {
				return slices.ContainsFunc(childrenWithEnv("HERMES_HOME="+r.home.Dir), func(p int) bool { return p != pid })
			})
			second := turn("st_2", "c2")
			if second == first {
				t.Fatalf("the restarted gateway reuses the TMPDIR %s", first)
			}
			private(second)

			// The runtime closed: the last gateway's folder goes with it.
			r.close()
			gone(second, "after the runtime closed")
			filepath.WalkDir(inherited, func(p string, d fs.DirEntry, err error) error {
				if err == nil && (strings.HasPrefix(d.Name(), "hermes-snap-") || strings.HasPrefix(d.Name(), "hermes-cwd-")) {
					t.Errorf("a Hermes terminal file outlived its gateway: %s", p)
				}
				return nil
			})
		})
	}
}

// gatewayWithEnv returns the pid of this process's child whose environment holds kv:
// the gateway (or the bubblewrap in front of it), the leader of its process group.
func gatewayWithEnv(t *testing.T, kv string) int {
	t.Helper()
	if pids := childrenWithEnv(kv); len(pids) > 0 {
		return pids[0]
	}
	t.Fatalf("no child process of the test has %s in its environment", kv)
	return 0
}

// childrenWithEnv returns the pids of this process's live children whose environment
// holds kv.
func childrenWithEnv(kv string) []int {
	key, val, _ := strings.Cut(kv, "=")
	return slices.DeleteFunc(testproc.ChildrenOf(os.Getpid()), func(pid int) bool {
		v, ok := testproc.Process{PID: pid}.Env(key)
		return !ok || v != val
	})
}
