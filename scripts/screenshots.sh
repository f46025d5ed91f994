#!/usr/bin/env bash
# Screenshots of the real app under Xvfb, driven by `talaria-drivers --selftest
# --scenario` (the app with its test drivers, `make build-drivers`):
# an approval card, a vault card, a running background task, the Diagnostics view, the
# About view and an MCP tool's approval and tool card (the real server-everything,
# scripts/mcp-setup.sh).
# They are written to build/screenshots/. Each scenario must reach its state or the
# script fails.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin/talaria-drivers}
[ -x "$BIN" ] || { echo "screenshots: $BIN is missing (make build-drivers)" >&2; exit 1; }
OUT=build/screenshots
mkdir -p "$OUT"
export XDG_RUNTIME_DIR=$(mktemp -d)
chmod 700 "$XDG_RUNTIME_DIR"
trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
# The hermes scenario drives the real Hermes Agent that scripts/hermes-setup.sh installs.
export TALARIA_HERMES_PYTHON=${TALARIA_HERMES_PYTHON:-$PWD/.cache/hermes-0.19.0/bin/python}
for s in ${SCENARIOS:-approval vault background diagnostics about mcp hermes sandbox}; do
  data=$(mktemp -d)
  if ! timeout 120 xvfb-run -a -n $((200 + RANDOM % 700)) -s "-screen 0 1280x800x24" dbus-run-session -- \
      "$BIN" --selftest --scenario "$s" --data-dir "$data" --screenshot "$OUT/$s.png" >"$OUT/$s.log" 2>&1; then
    echo "screenshots: scenario $s failed; its log:" >&2
    tail -30 "$OUT/$s.log" >&2
    rm -rf "$data"
    exit 1
  fi
  rm -rf "$data"
  echo "screenshots: $OUT/$s.png"
done
