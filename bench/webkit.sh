#!/usr/bin/env bash
# The window benchmark (issue 16's table): the real Talaria binary in its WebKitGTK
# window under Xvfb beside a bare Wails app built with the same toolchain, interleaved
# in the same run (bench/webkit). Needs build/bin/talaria-drivers, the app with its
# benchmark drivers (make build-drivers).
#
#   bench/webkit.sh [--scale-db FILE] [--stream-report FILE] [--rounds N] [--before BIN]
#
# BEFORE=/path/to/older/talaria-drivers (or a talaria from before issue 25, which had the
# drivers built in) adds an older build as a column of the table.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/bin build/bench
# The bare app is built as the release binary is (the Makefile's build-only), so the
# size row compares like with like.
go build -trimpath -buildmode=pie -tags desktop,production -ldflags "-w -s" -o build/bin/bareapp ./bench/bareapp
go build -o build/bin/webkitbench ./bench/webkit
args=("$@")
if [[ -n "${BEFORE:-}" ]]; then args+=(--before "$BEFORE"); fi
export XDG_RUNTIME_DIR="$(mktemp -d)"
chmod 700 "$XDG_RUNTIME_DIR"
trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
	./build/bin/webkitbench --app build/bin/talaria-drivers --bare build/bin/bareapp "${args[@]}" 2> >(grep -v -e 'dbus-daemon' -e 'SpiRegistry' >&2)
