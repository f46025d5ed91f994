#!/usr/bin/env bash
# Screenshots of each real ACP agent's turn in the real window (the built binary under
# Xvfb, `talaria-drivers --selftest --scenario acp-<agent>`, the app with its test
# drivers): the agent added as in Settings,
# a chat on it, its permission card with the agent's own options and the diff
# (acp-<agent>.png), then the finished turn with the tool card and the todo list
# (acp-<agent>-done.png); for OpenCode also Settings > ACP agents after its Test
# (acp-opencode-settings.png). The agents are the test installs in .cache/ (make setup).
# Written to build/screenshots/; docs/screenshots/ keeps the ones committed.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin/talaria-drivers}
OUT=${OUT:-build/screenshots}
mkdir -p "$OUT"
arch=$(uname -m); [ "$arch" = x86_64 ] && arch=x64
export TALARIA_SCENARIO_OPENCODE=$PWD/.cache/opencode-1.18.33/node_modules/opencode-linux-$arch/bin/opencode
export TALARIA_SCENARIO_HERMES=$PWD/.cache/hermes-0.19.0/bin/hermes
for f in "$TALARIA_SCENARIO_OPENCODE" "$TALARIA_SCENARIO_HERMES" "$BIN"; do
  [ -x "$f" ] || { echo "acp-screenshots: $f is missing: run make setup and make build-drivers" >&2; exit 1; }
done
export XDG_RUNTIME_DIR=$(mktemp -d)
chmod 700 "$XDG_RUNTIME_DIR"
trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
for agent in ${AGENTS:-opencode hermes}; do
  data=$(mktemp -d)
  if ! timeout 300 xvfb-run -a -n $((200 + RANDOM % 700)) -s "-screen 0 1280x800x24" dbus-run-session -- \
      "$BIN" --selftest --scenario "acp-$agent" --data-dir "$data" --screenshot "$OUT/acp-$agent.png" >"$OUT/acp-$agent.log" 2>&1; then
    echo "acp-screenshots: acp-$agent failed; its log:" >&2
    tail -40 "$OUT/acp-$agent.log" >&2
    rm -rf "$data"
    exit 1
  fi
  rm -rf "$data"
  echo "acp-screenshots: $OUT/acp-$agent.png $OUT/acp-$agent-done.png"
done
