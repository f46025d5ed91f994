#!/usr/bin/env bash
# Headless smoke test of the real app: runs build/bin/talaria-drivers --selftest (the
# app with its test drivers, `make build-drivers`) under Xvfb with a private D-Bus
# session. The app starts its scripted provider, sends one message
# through its bound methods, waits for `done`, screenshots the window and exits 0 only
# if the answer was saved in SQLite. The screenshot is build/smoke/selftest.png. There is
# no tray host in that session, which is checked too.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin/talaria-drivers}
[ -x "$BIN" ] || { echo "smoke: $BIN is missing (make build-drivers)" >&2; exit 1; }
OUT=build/smoke
mkdir -p "$OUT"
rm -f "$OUT/selftest.png"
data=$(mktemp -d)
export XDG_RUNTIME_DIR=$(mktemp -d)
chmod 700 "$XDG_RUNTIME_DIR"
trap 'rm -rf "$data" "$XDG_RUNTIME_DIR"' EXIT
set +e
timeout 180 xvfb-run -a -n $((200 + RANDOM % 700)) -s "-screen 0 1280x800x24" dbus-run-session -- \
  "$BIN" --selftest --data-dir "$data" --screenshot "$OUT/selftest.png" >"$OUT/selftest.log" 2>&1
rc=$?
set -e
grep -E 'selftest (passed|FAILED)' "$OUT/selftest.log" || true
if [ $rc -ne 0 ]; then
  echo "smoke: the self-test failed (exit $rc); its log:" >&2
  tail -50 "$OUT/selftest.log" >&2
  exit 1
fi
[ -s "$OUT/selftest.png" ] || { echo "smoke: no screenshot was written" >&2; exit 1; }
# The session has no tray host (no StatusNotifierWatcher, no XEmbed tray): the app must
# have registered its tray icon anyway, noticed there is no host, and still worked.
grep -q 'msg="window ready" tray=true tray_host=false' "$OUT/selftest.log" || {
  echo "smoke: the app did not report running with its tray registered and no tray host; its log:" >&2
  tail -50 "$OUT/selftest.log" >&2
  exit 1
}
# Its agent process is talaria-sidecar beside it (as the release's is), not the app's
# own binary (which loads GTK and WebKit).
grep -q "msg=\"sidecar started\".*command=$(realpath "$BIN")-sidecar" "$OUT/selftest.log" || {
  echo "smoke: the app did not start $BIN-sidecar as its sidecar: $(grep 'sidecar started' "$OUT/selftest.log" | head -1)" >&2
  exit 1
}
# Match this binary by its absolute path: another Talaria on the machine is not ours.
if pgrep -f "^$(realpath "$BIN")(-sidecar)? sidecar" >/dev/null; then
  echo "smoke: a sidecar process outlived the app" >&2
  exit 1
fi
echo "smoke: ok, screenshot at $OUT/selftest.png"
