#!/usr/bin/env bash
# Process-lifecycle checks of the real binary under Xvfb with a private D-Bus session
# and NO tray host (what a bare GNOME session looks like):
#   1. SIGTERM quits cleanly (exit 0, "talaria stopped" logged) and no sidecar remains;
#   2. SIGKILL of the app: its sidecar exits (parent-death signal, stdin EOF);
#   3. closing the window (WM_DELETE_WINDOW, as a close button) quits, since no tray
#      host could bring a hidden window back, and no sidecar remains;
#   4. a second launch on the same data folder exits at once (status 0) and leaves the
#      first app, still alone with one sidecar; a launch on another folder runs beside it.
# Fails loudly with the app's log. Logs are kept in build/smoke/orphan-*.log.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${BIN:-build/bin/talaria}")
OUT=$(realpath -m build/smoke)

if [ "${1:-}" != --inside ]; then
  mkdir -p "$OUT"
  rm -f "$OUT"/orphan-*.log
  XDG_RUNTIME_DIR=$(mktemp -d)
  export XDG_RUNTIME_DIR
  chmod 700 "$XDG_RUNTIME_DIR"
  trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
  XHELPER="$XDG_RUNTIME_DIR/xhelper"
  go build -tags sqlite_fts5 -o "$XHELPER" ./scripts/xhelper
  export XHELPER BIN
  timeout 300 xvfb-run -a -n $((200 + RANDOM % 700)) -s "-screen 0 1280x800x24" dbus-run-session -- "$0" --inside \
    3>&2 2>"$OUT/orphan-session.log" # the session's own noise (dbus, at-spi) goes to the log
  exit $?
fi

exec 2>&3 3>&- # this script's messages go to the caller's stderr again
TMP=$(mktemp -d)
APPS=()
cleanup() {
  for p in "${APPS[@]}"; do { kill -KILL "$p" && wait "$p"; } 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
  echo "orphan: FAIL: $*" >&2
  for f in "$OUT"/orphan-*.log; do
    [ -s "$f" ] && { echo "--- $f" >&2; tail -30 "$f" >&2; }
  done
  echo "orphan: FAIL: $* (the logs above)" >&2 # again last: CI shows the tail
  exit 1
}

# alive PID: the process exists and is not a zombie.
alive() {
  [ -r "/proc/$1/stat" ] || return 1
  local st
  st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}

# WAIT is the one deadline of every wait, in seconds: TALARIA_TEST_WAIT as the Go tests
# read it (internal/testwait: "90s", "3m"), else 120. It only turns a hang into a
# failure: every wait is for what it needs to see.
WAIT=120
case "${TALARIA_TEST_WAIT:-}" in
  *[0-9]s) WAIT=${TALARIA_TEST_WAIT%s} ;;
  *[0-9]m) WAIT=$((${TALARIA_TEST_WAIT%m} * 60)) ;;
esac

# sidecar_of APP: the pid of APP's sidecar child, waiting for it.
sidecar_of() {
  local s="" end=$((SECONDS + WAIT))
  while [ "$SECONDS" -lt "$end" ]; do
    s=$(pgrep -P "$1" -f -- "^$BIN-sidecar sidecar\$" || true)
    [ -n "$s" ] && { echo "$s"; return 0; }
    alive "$1" || return 1
    sleep 0.1
  done
  return 1
}

# window_of APP: waits for APP's window and prints its id.
window_of() {
  local w="" end=$((SECONDS + WAIT))
  while [ "$SECONDS" -lt "$end" ]; do
    w=$(xdotool search --onlyvisible --pid "$1" --name '^Talaria$' 2>/dev/null | head -1 || true)
    [ -n "$w" ] && { echo "$w"; return 0; }
    sleep 0.1
  done
  return 1
}

# gone PID: waits until PID has exited.
gone() {
  local end=$((SECONDS + WAIT))
  while alive "$1"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.1
  done
}

# logged FILE PATTERN: waits until FILE has a line matching PATTERN.
logged() {
  local end=$((SECONDS + WAIT))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.1
  done
}

# start NAME DATADIR: starts the app; sets APP and SIDECAR.
start() {
  "$BIN" --data-dir "$2" >"$OUT/orphan-$1.log" 2>&1 &
  APP=$!
  APPS+=("$APP")
  SIDECAR=$(sidecar_of "$APP") || fail "$1: no sidecar started"
}

# finish NAME: the app must exit with status 0 and have logged its stop.
finish() {
  gone "$APP" || fail "$1: the app did not exit within $WAIT s"
  local rc=0
  wait "$APP" || rc=$?
  [ "$rc" = 0 ] || fail "$1: the app exited with status $rc"
  grep -q 'msg="talaria stopped"' "$2/logs/talaria.log" || fail "$1: the app did not shut down cleanly"
  gone "$SIDECAR" || fail "$1: sidecar $SIDECAR outlived the app"
}

# 1. SIGTERM.
d="$TMP/term"
start sigterm "$d"
window_of "$APP" >/dev/null || fail "sigterm: no window"
kill -TERM "$APP"
finish sigterm "$d"
grep -q 'signal received; quitting' "$d/logs/talaria.log" || fail "sigterm: the signal was not handled as a quit"
echo "orphan: ok: SIGTERM quits cleanly and stops the sidecar"

# 2. SIGKILL.
d="$TMP/kill"
start sigkill "$d"
kill -KILL "$APP"
wait "$APP" 2>/dev/null || true
gone "$SIDECAR" || fail "sigkill: sidecar $SIDECAR still runs $WAIT s after the app was killed"
echo "orphan: ok: after SIGKILL of the app its sidecar exits"

# 3. Closing the window without a tray host quits.
d="$TMP/close"
start close "$d"
win=$(window_of "$APP") || fail "close: no window"
logged "$d/logs/talaria.log" 'msg="window ready"' || fail "close: the page did not load"
"$XHELPER" wmclose "$win"
finish close "$d"
grep -q 'tray_host=false' "$d/logs/talaria.log" || fail "close: the app did not log that no tray host was found"
echo "orphan: ok: closing the window with no tray host quits and stops the sidecar"

# 4. One instance per data folder.
d="$TMP/single"
start single "$d"
first=$APP first_sidecar=$SIDECAR
window_of "$first" >/dev/null || fail "single: no window"
rc=0
timeout "$WAIT" "$BIN" --data-dir "$d" >"$OUT/orphan-second.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "single: the second launch exited with status $rc"
grep -q 'already running' "$OUT/orphan-second.log" || fail "single: the second launch did not say the app runs"
alive "$first" || fail "single: the first app died"
n=$(grep -c 'msg="talaria started"' "$d/logs/talaria.log" || true)
[ "$n" = 1 ] || fail "single: the backend was started $n times on one folder, want 1"
[ "$(pgrep -P "$first" -f -- "^$BIN-sidecar sidecar\$")" = "$first_sidecar" ] || fail "single: the first app's sidecar changed"
grep -q 'second launch' "$d/logs/talaria.log" || fail "single: the first app did not see the second launch"
start other "$TMP/other"
other=$APP
alive "$first" || fail "single: the first app died when another folder's app started"
kill -TERM "$other"
APP=$other
finish other "$TMP/other"
APP=$first SIDECAR=$first_sidecar
kill -TERM "$first"
finish single "$d"
echo "orphan: ok: a second launch on the same folder defers to the first; other folders run beside it"
echo "orphan: ok"
