#!/usr/bin/env bash
# Takes the picture of a fresh data folder's first screen (the empty chat) with this
# build's window, for the binary to embed (app/baked/README.md): runs DRIVERS (a
# talaria-drivers built from the same frontend/dist) once under Xvfb on an empty data
# folder until the window has kept its picture (backend/firstscreen), and copies it to
# OUT. Without an X server to run it under, or when the run fails, it says so and makes
# none: the app works without it (a first start then paints once the app has drawn).
#
#   scripts/bake-first-screen.sh build/bin/talaria-drivers app/baked/first-screen.html
set -uo pipefail
drivers=$1 out=$2
rm -f "$out"
if ! command -v xvfb-run >/dev/null || ! command -v dbus-run-session >/dev/null; then
	echo "bake-first-screen: no xvfb-run or dbus-run-session here; the build has no picture of the first screen (apt install xvfb dbus)" >&2
	exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The window's default size (app: 1180×780) on a screen that holds it, as on a desktop.
if TALARIA_BENCH_FIRST_SCREEN=1 timeout 120 xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
	"$drivers" --selftest --scenario bench-start --data-dir "$dir/data" >"$dir/log" 2>&1 &&
	[ -s "$dir/data/first-screen.html" ]; then
	cp "$dir/data/first-screen.html" "$out"
	echo "bake-first-screen: $out ($(wc -c <"$out") bytes)"
else
	echo "bake-first-screen: the window kept no picture of its first screen; the build has none. The run's last lines:" >&2
	tail -n 5 "$dir/log" >&2
fi
exit 0
