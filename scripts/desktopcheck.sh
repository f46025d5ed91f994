#!/usr/bin/env bash
# `make install` as a user gets it, checked in a fresh desktop session: a new HOME, Xvfb,
# a private D-Bus session bus and trayer as the tray host.
#   1. `make install`'s layout under ~/.local: the binary, a valid desktop entry
#      (desktop-file-validate), AppStream metainfo (appstreamcli), the hicolor icons, the
#      man page; GIO lists the app as a launcher does and finds it by a keyword;
#   2. `gtk-launch talaria` starts it from the entry: its window appears with the
#      WM_CLASS the entry's StartupWMClass names (build/smoke/desktop-launch.png);
#   3. the entry's "New chat" action reaches the running app and the window opens a new
#      chat; `gio launch` of the entry with the app stopped starts it again;
#   4. the login entry ("Start Talaria at login") started by `gio launch`, as a session
#      does at login: the app runs hidden with its icon in the tray; a launch from the
#      launcher then shows the window;
#   5. `make uninstall` removes every file (and the login entry), and GIO no longer
#      knows the app.
# Fails loudly with the app's log. Needs the tools scripts/setup.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${BIN:-build/bin/talaria}")
OUT=$(realpath -m build/smoke)
PY=/usr/bin/python3 # Debian's, with python3-gi

if [ "${1:-}" != --inside ]; then
  [ -x "$BIN" ] || { echo "desktopcheck: $BIN is missing (make build-only)" >&2; exit 1; }
  mkdir -p "$OUT"
  rm -f "$OUT"/desktop-*.png "$OUT"/desktop-*.log
  TOP=$(mktemp -d)
  trap 'rm -rf "$TOP"' EXIT
  export TOP
  export XDG_RUNTIME_DIR=$TOP/run
  mkdir -m 700 "$XDG_RUNTIME_DIR"
  go build -tags sqlite_fts5 -o "$TOP/xhelper" ./scripts/xhelper
  # A fresh user: nothing of this machine's own desktop configuration leaks in.
  session() {
    rm -rf "$TOP/home" "$XDG_RUNTIME_DIR"
    mkdir -m 700 "$XDG_RUNTIME_DIR"
    env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME -u XDG_STATE_HOME -u XDG_DATA_DIRS -u TALARIA_HOME \
      HOME="$TOP/home" BIN="$BIN" OUT="$OUT" \
      timeout 300 xvfb-run -a -n $((200 + RANDOM % 700)) -s "-screen 0 1280x800x24" dbus-run-session -- "$0" --inside \
      3>"$OUT/desktopcheck.err" 2>"$OUT/desktop-session.log"
  }
  session
  rc=$?
  # GTK could not open the Xvfb display (seen in a fresh-clone run on this shared
  # machine, as in pkgtest): that is the test's X server, not the app; one more try,
  # as a new user on a new server. Any other failure fails.
  if [ $rc != 0 ] && grep -q 'failed to init GTK' "$OUT/desktopcheck.err"; then
    echo "desktopcheck: the app could not open the Xvfb display (failed to init GTK); once more with a new server" >&2
    cp "$OUT/desktopcheck.err" "$OUT/desktopcheck-1.err"
    session
    rc=$?
  fi
  cat "$OUT/desktopcheck.err" >&2
  exit $rc
fi

exec 2>&3 3>&-
mkdir -p "$HOME"
# A login keyring, unlocked as a desktop login does (exactly one empty line).
echo "" | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 || true
PIDS=()
cleanup() {
  for p in "${PIDS[@]}" $(app_pids); do { kill -KILL "$p" && wait "$p"; } 2>/dev/null || true; done
}
trap cleanup EXIT
DATA=$HOME/.local/share/talaria
# The per-user data folder's logs are in the XDG state folder (core.Layout).
STATE=$HOME/.local/state/talaria
LOG=$STATE/logs/talaria.log
INSTALLED=$HOME/.local/bin/talaria
fail() {
  echo "desktopcheck: FAIL: $*" >&2
  import -window root "$OUT/desktop-failure.png" 2>/dev/null || true
  for f in "$LOG" "$OUT"/desktop-*.log; do
    [ -s "$f" ] && { echo "--- $f" >&2; tail -30 "$f" >&2; }
  done
  echo "desktopcheck: FAIL: $* (the logs above)" >&2 # again last: CI shows the tail
  exit 1
}
ok() { echo "desktopcheck: ok: $*"; }
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
# app_pids: the installed app's main processes (not its sidecar).
app_pids() { pgrep -f -x -- "$INSTALLED( --hidden| --new-chat)?" 2>/dev/null || true; }
running() { [ -n "$(app_pids)" ]; }
main_window() {
  local w WIDTH
  for w in $(xdotool search --onlyvisible --class '^Talaria$' 2>/dev/null); do
    eval "$(xdotool getwindowgeometry --shell "$w" 2>/dev/null | grep '^WIDTH=')"
    if [ "${WIDTH:-0}" -gt 200 ]; then
      echo "$w"
      return 0
    fi
  done
  return 1
}
visible() { main_window >/dev/null; }
# stopped: no app process, and no window of one (the X server drops a window when it
# sees its client's connection end, which may come after the process is gone).
stopped() { ! running && ! visible; }
# chats N: the database holds at least N chats.
chats() {
  "$PY" -c 'import sqlite3, sys; sys.exit(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM sessions").fetchone()[0] < int(sys.argv[2]))' \
    "$DATA/talaria.db" "$1"
}
log_has() { grep -q -- "$1" "$LOG" 2>/dev/null; }
stop_app() {
  local p
  for p in $(app_pids); do kill -TERM "$p"; done
  until_ok stopped || fail "the app did not quit on SIGTERM"
}
gio_py() { "$PY" -c "import sys, gi; gi.require_version('Gio', '2.0'); from gi.repository import Gio"$'\n'"$1" "${@:2}"; }

# 1. The layout.
PREFIX=$HOME/.local scripts/install.sh install >"$OUT/desktop-install.log"
for f in bin/talaria share/applications/talaria.desktop share/metainfo/io.talaria.Desktop.metainfo.xml \
  share/man/man1/talaria.1.gz share/icons/hicolor/48x48/apps/talaria.png share/icons/hicolor/512x512/apps/talaria.png \
  share/icons/hicolor/icon-theme.cache; do
  [ -e "$HOME/.local/$f" ] || fail "make install did not create ~/.local/$f"
done
ENTRY=$HOME/.local/share/applications/talaria.desktop
desktop-file-validate "$ENTRY" || fail "desktop-file-validate rejects the installed entry"
appstreamcli validate --no-net "$HOME/.local/share/metainfo/io.talaria.Desktop.metainfo.xml" >"$OUT/desktop-appstream.log" 2>&1 ||
  fail "appstreamcli rejects the metainfo"
grep -qx "Exec=$INSTALLED" "$ENTRY" || fail "the entry does not start $INSTALLED"
wmclass=$(sed -n 's/^StartupWMClass=//p' "$ENTRY")
man -l "$HOME/.local/share/man/man1/talaria.1.gz" 2>/dev/null | grep -q -- '--new-chat' || fail "the man page does not list --new-chat"
# As a launcher sees it: GIO's list of applications and its keyword search.
gio_py 'ids=[a.get_id() for a in Gio.AppInfo.get_all() if a.should_show()]; sys.exit(0 if "talaria.desktop" in ids else 1)' ||
  fail "GIO does not list talaria.desktop among the launcher's applications"
gio_py 'hits=[i for g in Gio.DesktopAppInfo.search("agent") for i in g]; sys.exit(0 if "talaria.desktop" in hits else 1)' ||
  fail "searching the launcher for 'agent' does not find Talaria"
gio_py 'a=Gio.DesktopAppInfo.new("talaria.desktop"); print(a.get_string("Icon")); sys.exit(0 if a.list_actions()==["new-chat"] and a.get_action_name("new-chat")=="New chat" else 1)' >/dev/null ||
  fail "the entry has no 'New chat' action"
ok "make install put the binary, a valid entry, icons, metainfo and the man page in ~/.local; GIO lists it and finds it by keyword"

# 2. Start it from the entry, as the launcher does.
gtk-launch talaria >"$OUT/desktop-gtk-launch.log" 2>&1 || fail "gtk-launch talaria failed"
until_ok visible || fail "gtk-launch talaria: no window appeared"
until_ok log_has 'msg="window ready"' || fail "the window did not report ready"
w=$(main_window)
xprop -id "$w" WM_CLASS | grep -q "\"$wmclass\"" || fail "the window's WM_CLASS ($(xprop -id "$w" WM_CLASS)) does not match StartupWMClass=$wmclass"
[ "$(app_pids | wc -l)" = 1 ] || fail "expected one app process, got: $(app_pids)"
# The sidecar starts at the page's first paint: the screenshot shows the page.
until_ok log_has 'msg="sidecar started"' || fail "the window did not paint"
# The agent process is talaria-sidecar from the install (no GTK or WebKit in it), not
# the app's own binary.
SIDECAR_BIN=$HOME/.local/lib/talaria/talaria-sidecar
grep -q "msg=\"sidecar started\".*command=$SIDECAR_BIN" "$LOG" ||
  fail "the app did not start $SIDECAR_BIN as its sidecar: $(grep 'sidecar started' "$LOG" | tail -1)"
import -window root "$OUT/desktop-launch.png"
ok "gtk-launch started $INSTALLED from its entry; its window has WM_CLASS $wmclass, its sidecar is $SIDECAR_BIN ($OUT/desktop-launch.png)"

# 3. The "New chat" action, then gio launch.
gio_py 'Gio.DesktopAppInfo.new("talaria.desktop").launch_action("new-chat", None)'
until_ok log_has 'second launch on this data folder.*new_chat=true' || fail "the New chat action did not reach the running app"
until_ok log_has 'launch actions taken by the window.*new_chat' || fail "the window did not take the New chat action"
[ "$(app_pids | wc -l)" = 1 ] || fail "the New chat action left a second app running"
until_ok chats 1 || fail "the New chat action made no chat"
import -window root "$OUT/desktop-new-chat.png"
stop_app
ok "the entry's New chat action reached the running app and the window opened a new chat ($OUT/desktop-new-chat.png)"

: >"$LOG"
gio launch "$ENTRY" >"$OUT/desktop-gio-launch.log" 2>&1 || fail "gio launch failed"
until_ok visible || fail "gio launch: no window appeared"
stop_app
: >"$LOG"
gio_py 'Gio.DesktopAppInfo.new("talaria.desktop").launch_action("new-chat", None)'
until_ok visible || fail "the New chat action did not start the app when it was not running"
until_ok log_has 'launch actions taken by the window.*new_chat' || fail "started by New chat, the window did not open a new chat"
stop_app
ok "gio launch starts the app; the New chat action starts it too when it is not running"

# 4. The login entry: hidden in the tray, then shown by a launch.
# trayer as the session's tray (started now: it does not survive icons going away).
trayer --edge bottom --align right --widthtype pixel --width 120 --heighttype pixel --height 32 \
  --transparent false --tint 0x333333 >"$OUT/desktop-trayer.log" 2>&1 &
PIDS+=($!)
until_ok xdotool search --onlyvisible --name '^panel$' || fail "trayer's panel did not come up"
AUTO=$("$TOP/xhelper" autostart "$INSTALLED")
[ "$AUTO" = "$HOME/.config/autostart/talaria.desktop" ] || fail "the login entry went to $AUTO"
desktop-file-validate "$AUTO" || fail "desktop-file-validate rejects the login entry"
: >"$LOG"
gio launch "$AUTO" >"$OUT/desktop-autostart.log" 2>&1 || fail "gio launch of the login entry failed"
until_ok log_has 'msg="started hidden in the tray"' || fail "started from the login entry, the app did not start hidden in the tray"
# The icon is registered at the page's first paint, after its load: a window that the
# start shows would be showing by then.
until_ok xdotool search --onlyvisible --class systray || fail "no icon in the tray"
visible && fail "started from the login entry, the window is showing (pid $(xdotool getwindowpid "$(main_window)" 2>/dev/null))"
import -window root "$OUT/desktop-autostart.png"
gtk-launch talaria >/dev/null 2>&1 || fail "gtk-launch talaria failed"
until_ok visible || fail "a launch did not show the window of the app started hidden"
[ "$(app_pids | wc -l)" = 1 ] || fail "the launch left a second app running"
stop_app
ok "the login entry starts the app hidden in the tray ($OUT/desktop-autostart.png); a launch shows its window"

# 5. Uninstall.
PREFIX=$HOME/.local scripts/install.sh uninstall >>"$OUT/desktop-install.log"
left=$(find "$HOME/.local" "$HOME/.config" -name 'talaria*' -not -path "$DATA*" -not -path "$STATE*" -not -name 'talaria.log*' 2>/dev/null || true)
[ -z "$left" ] || fail "make uninstall left: $left"
gio_py $'try:\n  Gio.DesktopAppInfo.new("talaria.desktop"); sys.exit(1)\nexcept TypeError:\n  sys.exit(0)  # the constructor returned NULL' || fail "GIO still knows talaria.desktop after uninstall"
[ -d "$DATA" ] || fail "make uninstall removed the data folder"
[ -f "$LOG" ] || fail "make uninstall removed the logs ($LOG)"
ok "make uninstall removed the binary, the entries, icons, metainfo and man page, and kept the data folder"
echo "desktopcheck: ok"
