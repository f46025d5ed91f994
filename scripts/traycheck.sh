#!/usr/bin/env bash
# The tray with a tray host: runs the real binary under Xvfb beside `trayer` (an XEmbed
# tray), a scripted provider and a stand-in notification server, and drives it with
# xdotool like a user:
#   1. the icon appears in the tray and its menu opens (build/smoke/tray-idle.png);
#   2. a turn starts; closing the window hides it (the app keeps running); when the turn
#      ends a "Turn finished" notification is sent, and clicking it shows the window;
#   3. a turn that keeps running shows the working icon and its line in the menu
#      (build/smoke/tray-working.png); with the window hidden, that line shows it again;
#   4. the menu's Quit quits: the app exits 0, the turn is stopped and no sidecar remains.
# Needs trayer and xdotool (scripts/setup.sh installs them); skips without them.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${BIN:-build/bin/talaria}")
OUT=$(realpath -m build/smoke)

if [ "${1:-}" != --inside ]; then
  for t in trayer xdotool import; do
    command -v "$t" >/dev/null || { echo "traycheck: SKIPPED: $t is not installed (scripts/setup.sh installs it)"; exit 0; }
  done
  mkdir -p "$OUT"
  rm -f "$OUT"/tray-*.png "$OUT"/tray-*.log
  XDG_RUNTIME_DIR=$(mktemp -d)
  export XDG_RUNTIME_DIR
  chmod 700 "$XDG_RUNTIME_DIR"
  trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
  XHELPER="$XDG_RUNTIME_DIR/xhelper" FAKEPROVIDER="$XDG_RUNTIME_DIR/fakeprovider"
  go build -tags sqlite_fts5 -o "$XHELPER" ./scripts/xhelper
  go build -o "$FAKEPROVIDER" ./sidecar/providertest/cmd/fakeprovider
  export XHELPER FAKEPROVIDER BIN
  timeout 300 xvfb-run -a -n $((200 + RANDOM % 700)) -s "-screen 0 1280x800x24" dbus-run-session -- "$0" --inside \
    3>&2 2>"$OUT/traycheck-session.log" # the session's own noise (dbus, at-spi) goes to the log
  exit $?
fi

exec 2>&3 3>&- # this script's messages go to the caller's stderr again
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do { kill -KILL "$p" && wait "$p"; } 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() {
  echo "traycheck: FAIL: $*" >&2
  import -window root "$OUT/tray-failure.png" 2>/dev/null || true
  for w in $(xdotool search --name . 2>/dev/null); do
    echo "window $w $(xdotool getwindowname "$w" 2>/dev/null) $(xdotool getwindowgeometry "$w" 2>/dev/null | tr '\n' ' ')" >&2
  done
  for f in "$OUT"/tray-*.log "$TMP/data/logs/talaria.log"; do
    [ -s "$f" ] && { echo "--- $f" >&2; tail -30 "$f" >&2; }
  done
  echo "(screen at $OUT/tray-failure.png)" >&2
  echo "traycheck: FAIL: $* (the windows and logs above)" >&2 # again last: CI shows the tail
  exit 1
}
alive() {
  [ -r "/proc/$1/stat" ] || return 1
  local st
  st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}
# WAIT is the one deadline of every wait, in seconds: TALARIA_TEST_WAIT as the Go tests
# read it (internal/testwait: "90s", "3m"), else 120. It only turns a hang into a
# failure: nothing waits for a time, every wait is for what it needs to see.
WAIT=120
case "${TALARIA_TEST_WAIT:-}" in
  *[0-9]s) WAIT=${TALARIA_TEST_WAIT%s} ;;
  *[0-9]m) WAIT=$((${TALARIA_TEST_WAIT%m} * 60)) ;;
esac
# until_ok CMD...: retries CMD every 0.1 s until it succeeds, for up to WAIT seconds.
until_ok() {
  local end=$((SECONDS + WAIT))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.1
  done
}
not_alive() { ! alive "$1"; }
# main_window: the id of Talaria's visible main window (not the tray icon's window).
main_window() {
  local w WIDTH
  for w in $(xdotool search --onlyvisible --name '^Talaria$' 2>/dev/null); do
    eval "$(xdotool getwindowgeometry --shell "$w" 2>/dev/null | grep '^WIDTH=')"
    if [ "${WIDTH:-0}" -gt 200 ]; then
      echo "$w"
      return 0
    fi
  done
  return 1
}
visible() { main_window >/dev/null; }
hidden() { ! visible; }
# tray_icon: the centre "x y" of Talaria's icon: the right end of trayer's panel (it is
# the only icon there; its window's name changes with the label, so it is not searched).
tray_icon() {
  local w X Y WIDTH HEIGHT
  w=$(xdotool search --onlyvisible --name '^panel$' 2>/dev/null | head -1)
  [ -n "$w" ] || return 1
  eval "$(xdotool getwindowgeometry --shell "$w" | grep -E '^(X|Y|WIDTH|HEIGHT)=')"
  echo "$((X + WIDTH - 16)) $((Y + HEIGHT / 2))"
}
# menu_open: a popup menu is on screen (a viewable override-redirect window: GTK's
# menu; the app's other windows are managed).
menu_open() {
  local w
  for w in $(xwininfo -root -children 2>/dev/null | grep -o '^ *0x[0-9a-f]*'); do
    xwininfo -id "$w" -all 2>/dev/null | grep -q 'Override Redirect State: yes' || continue
    xwininfo -id "$w" 2>/dev/null | grep -q 'Map State: IsViewable' && return 0
  done
  return 1
}
menu_closed() { ! menu_open; }
open_menu() {
  local pos
  until_ok menu_closed || fail "a menu is still open"
  # The panel was found a moment ago, yet one look can miss it (a fresh clone's run saw
  # "no tray icon" with the panel on screen): read its position until it answers.
  local found_by=$((SECONDS + WAIT))
  until pos=$(tray_icon 2>/dev/null); do
    [ "$SECONDS" -lt "$found_by" ] || fail "no tray icon"
    sleep 0.1
  done
  # A click can be lost: under load the icon is drawn before GTK has attached its menu,
  # or the popup's pointer grab fails while another client holds the pointer (CI saw the
  # menu never open after one click). A user clicks again; so does this, waiting twice as
  # long each time (2, 4, 8 … s, so a slow popup is never clicked shut), until WAIT.
  local end=$((SECONDS + WAIT)) step=2 clicks=0
  while :; do
    # shellcheck disable=SC2086
    xdotool mousemove $pos click 1
    clicks=$((clicks + 1))
    WAIT=$step until_ok menu_open && break
    [ "$SECONDS" -lt "$end" ] || fail "clicking the tray icon did not open its menu ($clicks clicks)"
    step=$((step * 2))
  done
  ((clicks == 1)) || echo "traycheck: note: the menu opened on click $clicks" >&2
  # The pointer leaves the menu, so no item is selected: Down then selects the first
  # item and Up the last. (The menu holds the grab: the X server hands it this motion
  # and the keys after it in order.)
  xdotool mousemove 400 400
}
close_menu() {
  xdotool key Escape
  until_ok menu_closed || fail "Escape did not close the tray menu"
}
# sessions: how many chats the database holds (Debian's Python reads it: the sqlite3
# command is not among what scripts/setup.sh installs).
sessions() {
  /usr/bin/python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM sessions").fetchone()[0])' \
    "$TMP/data/talaria.db" 2>/dev/null
}
more_sessions() { [ "$(sessions)" -gt "$1" ]; }
# asked TEXT: the scripted provider got a request with TEXT (the turn runs).
asked() { curl -fsS "$control/requests" | grep -qF -- "$1"; }
send() { # send TEXT: a new chat, TEXT typed in the composer and sent
  local n
  n=$(sessions) || fail "cannot read the chats from the database"
  xdotool mousemove 252 42 click 1
  until_ok more_sessions "$n" || fail "New chat made no chat"
  xdotool mousemove 700 730 click 1
  xdotool type --delay 15 "$1"
  xdotool key Return
  until_ok asked "$1" || fail "the message '$1' did not reach the provider"
}
close_window() {
  local w
  w=$(main_window) || fail "no window to close"
  "$XHELPER" wmclose "$w"
}

# A login keyring, unlocked as a desktop login does (as desktopcheck.sh): else the
# app's first use of the Secret Service raises gnome-keyring's "Unlock Login Keyring"
# prompt, whose grab swallowed the first click on the tray icon (the menu the first
# screenshot was meant to show never opened).
echo "" | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 || true
"$XHELPER" notifyd --click finished >"$OUT/tray-notifications.log" 2>&1 &
PIDS+=($!)
until_ok grep -q READY "$OUT/tray-notifications.log" || fail "the notification stand-in did not start"

# The answer of the first turn (its end held until the window is hidden: gate "hidden"),
# its title (aux.complete), then an answer that never ends.
cat >"$TMP/turns.json" <<'EOF'
[{"chunks":[{"text":"Almost","delay_ms":100},{"text":" done.","gate":"hidden"}]},
 {"chunks":[{"text":"Changelog"}]},
 {"chunks":[{"text":"Working on it"}],"hang_after":true}]
EOF
"$FAKEPROVIDER" --addr 127.0.0.1:0 --script "$TMP/turns.json" 2>"$OUT/tray-provider.log" &
PIDS+=($!)
until_ok grep -q 'serving http' "$OUT/tray-provider.log" || fail "the scripted provider did not start"
url=$(grep -o 'http://[^ ]*' "$OUT/tray-provider.log" | head -1)
control=${url%/v1}/_control
"$XHELPER" seed --data-dir "$TMP/data" --base-url "$url"

trayer --edge bottom --align right --widthtype pixel --width 120 --heighttype pixel --height 32 \
  --transparent false --tint 0x333333 >"$OUT/tray-trayer.log" 2>&1 &
PIDS+=($!)
until_ok tray_icon || fail "trayer's panel did not come up"
"$BIN" --data-dir "$TMP/data" >"$OUT/tray-app.log" 2>&1 &
APP=$!
PIDS+=("$APP")
until_ok grep -q 'msg="window ready"' "$TMP/data/logs/talaria.log" || fail "the window did not come up"
grep -q 'tray_host=true' "$TMP/data/logs/talaria.log" || fail "the app did not find trayer as its tray host"
# The sidecar starts once the window has painted (at the latest 3 s after it loaded).
until_ok pgrep -P "$APP" -f -- "^$BIN-sidecar sidecar\$" || fail "no sidecar"
SIDECAR=$(pgrep -P "$APP" -f -- "^$BIN-sidecar sidecar\$")

# 1. The icon is there and its menu opens.
until_ok tray_icon || fail "no tray panel"
until_ok xdotool search --onlyvisible --name '^talaria$' || fail "no icon in the tray"
open_menu
import -window root "$OUT/tray-idle.png"
close_menu
echo "traycheck: ok: the icon is in the tray and its menu opens ($OUT/tray-idle.png)"

# 2. Closing hides; a finished turn notifies; the notification shows the window.
send "Write the changelog"
close_window
until_ok hidden || fail "closing the window did not hide it"
alive "$APP" || fail "closing the window quit the app although a tray host runs"
curl -fsS -d '{"gate":"hidden"}' "$control/release" >/dev/null || fail "the provider did not let the answer end"
# The chat's name in the notice is its first message or the title made for it at the
# turn's end (the scripted "Changelog"): the notice and the title race, and neither
# order is wrong (CI saw "Changelog").
until_ok grep -qE 'summary="Turn finished" body="The agent finished in “(Write the changelog|Changelog)”."' "$OUT/tray-notifications.log" ||
  fail "no 'Turn finished' notification while the window was hidden"
until_ok visible || fail "clicking the notification did not show the window"
grep -q 'summary="Talaria is still running"' "$OUT/tray-notifications.log" || fail "no 'still running' notice on the first hide"
echo "traycheck: ok: closing hides to the tray; a finished turn notifies and the notification opens the window"

# 3. A running turn: the working icon and the menu line, which shows the hidden window.
send "Tidy up the release notes"
# The icon's title is the number of running turns (drawn with the menu's lines).
until_ok xdotool search --onlyvisible --name '^1$' || fail "the tray does not count the running turn"
open_menu
import -window root "$OUT/tray-working.png"
close_menu
close_window
until_ok hidden || fail "closing the window did not hide it"
open_menu
xdotool key Down Down Return # Show Talaria, (the disabled header), the running turn
until_ok visible || fail "the running turn's menu line did not show the window"
echo "traycheck: ok: a running turn is listed in the menu and opens its chat ($OUT/tray-working.png)"

# 4. Quit from the tray drains.
open_menu
xdotool key Up Return # the last item: Quit Talaria
until_ok not_alive "$APP" || fail "the tray's Quit did not quit"
rc=0
wait "$APP" || rc=$?
[ "$rc" = 0 ] || fail "the app exited with status $rc after Quit"
grep -q 'msg="talaria stopped"' "$TMP/data/logs/talaria.log" || fail "the app did not shut down cleanly"
until_ok not_alive "$SIDECAR" || fail "sidecar $SIDECAR outlived the app"
echo "traycheck: ok: the tray's Quit stops the running turn and the sidecar"
echo "traycheck: ok"
