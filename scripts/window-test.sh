#!/usr/bin/env bash
# make test-window: the window tests. Starts ONE `wails dev` of this tree under Xvfb
# with a private D-Bus session, an unlocked gnome-keyring, its own data folder and the
# scripted provider (sidecar/providertest/cmd/fakeprovider, scripted per test through
# its control API), runs every Playwright spec in frontend/e2e/ against it with
# Debian's Chromium, and stops everything it started, whatever happens.
#
#   scripts/window-test.sh [playwright args...]    e.g. scripts/window-test.sh composer
#
# Logs, traces and screenshots of failures go to build/window-test/. See
# frontend/e2e/README.md for writing a spec.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=$ROOT/build/window-test
rm -rf "$OUT"
mkdir -p "$OUT"
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work/xdg
mkdir -m 700 "$XDG_RUNTIME_DIR"
# The app's per-user files outside its data folder (the login entry of "Start Talaria
# at login") go to a throwaway folder, never this machine's ~/.config.
export XDG_CONFIG_HOME=$work/config
mkdir -p "$XDG_CONFIG_HOME"
# Remote hosts' ssh reads this file, which remote.spec.ts writes for its own sshd, never
# ~/.ssh/config (and never adds to ~/.ssh/known_hosts).
export TALARIA_SSH_CONFIG=$work/ssh_config
: >"$TALARIA_SSH_CONFIG"
pids=()

say() { printf '== window-test: %s\n' "$*"; }

stop_all() {
  local rc=$?
  # Each background job leads its own process group (setsid): TERM the groups, give
  # them a moment (wails dev kills its app and Vite, the app drains its sidecar), then
  # KILL what is left.
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 -- "-$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.2
  done
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  cp -r "$work/data/logs" "$OUT/app-logs" 2>/dev/null || true
  rm -rf "$work"
  exit "$rc"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# The window tests' browser (Wails' BrowserOpenURL runs xdg-open): it follows the URL's
# redirects and notes where it ended in browser.log, so an MCP server's OAuth sign-in
# reaches the app's loopback listener (mcpoauth.spec.ts); no real browser opens.
mkdir -p "$work/bin"
cat >"$work/bin/xdg-open" <<EOS
#!/bin/sh
exec curl -sSL --max-time 60 -o /dev/null -w '%{url_effective} %{http_code}\n' "\$1" >>"$OUT/browser.log" 2>&1
EOS
chmod +x "$work/bin/xdg-open"
export PATH="$work/bin:$PATH"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# The scripted provider, built once (a second or two when cached).
go build -o "$work/fakeprovider" ./sidecar/providertest/cmd/fakeprovider
setsid "$work/fakeprovider" --addr 127.0.0.1:0 --split-aux --url-file "$work/provider.url" \
  >"$OUT/provider.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$work/provider.url" ] && break; sleep 0.1; done
[ -s "$work/provider.url" ] || { echo "window-test: the scripted provider did not start" >&2; cat "$OUT/provider.log" >&2; exit 1; }
PROVIDER_URL=$(cat "$work/provider.url")

DEVPORT=${WINDOW_TEST_DEVPORT:-$(free_port)}
VITEPORT=${WINDOW_TEST_VITEPORT:-$(free_port)}
mkdir -p "$work/data"
say "wails dev on localhost:$DEVPORT (Vite $VITEPORT), provider $PROVIDER_URL, data $work/data"
# -frontenddevserverurl: Vite's address is given, not discovered (wails gives discovery
# only 10 s, which a loaded machine's first Vite start can exceed);
# -m: no `go mod tidy`; -s: no production frontend build (Vite serves it);
# -skipbindings: the committed frontend/wailsjs is what is tested; -noreload and
# -nogorebuild: nothing restarts under a running test. The data folder is given as
# TALARIA_HOME (Wails' dev build parses the command line itself and refuses our flags).
setsid xvfb-run -a -n $((200 + RANDOM % 700)) -s "-screen 0 1280x800x24" dbus-run-session -- bash -c '
  echo "" | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 || true
  exec env TALARIA_VITE_PORT="$1" TALARIA_HOME="$4" "$2" dev -tags sqlite_fts5 -devserver "localhost:$3" \
    -frontenddevserverurl "http://localhost:$1" \
    -m -s -skipbindings -noreload -nogorebuild -nocolour -loglevel Warning' _ "$VITEPORT" "$ROOT/tools/bin/wails" "$DEVPORT" "$work/data" \
  >"$OUT/wails-dev.log" 2>&1 &
pids+=($!)

# A cold `wails dev` compiles the app (about 2 minutes on 2 cores); warm, seconds.
ready=0
for _ in $(seq 1 600); do
  if curl -fsS -o /dev/null "http://localhost:$DEVPORT/wails/ipc.js" 2>/dev/null \
    && curl -fsS -o /dev/null "http://localhost:$VITEPORT/" 2>/dev/null; then ready=1; break; fi
  kill -0 -- "-${pids[1]}" 2>/dev/null || break
  sleep 0.5
done
if ((!ready)); then
  echo "window-test: wails dev did not come up; its log:" >&2
  tail -60 "$OUT/wails-dev.log" >&2
  exit 1
fi
say "wails dev is up"

set +e
(cd frontend && TALARIA_URL="http://localhost:$DEVPORT/" TALARIA_PROVIDER_URL="$PROVIDER_URL" \
  TALARIA_DATA_DIR="$work/data" WINDOW_TEST_OUT="$OUT" \
  npx playwright test -c e2e/playwright.config.ts "$@")
rc=$?
set -e
if ((rc != 0)); then
  echo "window-test: failed (exit $rc); the app's log tail (full logs in $OUT):" >&2
  tail -40 "$OUT/wails-dev.log" >&2
fi
exit $rc
