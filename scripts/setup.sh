#!/usr/bin/env bash
# Installs what building and testing Talaria needs on Debian 12, idempotently and fast
# when nothing is missing: apt packages (only the missing ones), the wails CLI v2.9.2
# (built from tools/wails, since `go install` of it fails on Go 1.26), Go modules, and
# the frontend's npm packages.
#
#   scripts/setup.sh          everything `make test` needs (the default)
#   scripts/setup.sh --app    only what building and running the app needs (`make run`,
#                             `make build`, `make dev`): no test agents, servers or tools
set -euo pipefail
cd "$(dirname "$0")/.."
APP_ONLY=0
[ "${1:-}" = --app ] && APP_ONLY=1

APT_PACKAGES=(build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.0-dev
  libayatana-appindicator3-dev xvfb xauth dbus dbus-x11 gnome-keyring imagemagick
  trayer xdotool)
# The Linux release links the system's SQLite (the Makefile's RELEASE_TAGS).
APT_PACKAGES+=(libsqlite3-dev)
# app/uifont's tests compare with fontconfig's own answer (fc-match) and alias system-ui
# to DejaVu Serif.
APT_PACKAGES+=(fontconfig fonts-dejavu-core)
# Remote runtimes (backend/remote) are tested through a real sshd on a loopback port,
# with the system ssh client.
APT_PACKAGES+=(openssh-client openssh-server)
# The sandbox (issue #10): bubblewrap confines every command the agent runs (a runtime
# dependency of the app too, see README).
APT_PACKAGES+=(bubblewrap)
if ((!APP_ONLY)); then
# Packaging and platform checks (issue 15): the man page (help2man), desktop entry and
# AppStream checks, gtk-launch and GLib's Python bindings (scripts/desktopcheck.sh),
# xprop, the .deb test's folder system and lint (debootstrap, lintian), the Windows
# cross-build (mingw-w64) and wine to run Windows test binaries.
APT_PACKAGES+=(help2man desktop-file-utils appstream libgtk-3-bin python3-gi gir1.2-glib-2.0
  x11-utils debootstrap lintian gcc-mingw-w64-x86-64 wine64)
# The window tests (scripts/window-test.sh, frontend/e2e): Playwright drives Debian's
# Chromium at `wails dev`'s address.
APT_PACKAGES+=(chromium curl)
# iproute2 and netcat give the sandbox tests and the adversarial suite the tools an
# attacker would reach for.
APT_PACKAGES+=(iproute2 netcat-openbsd)
fi

say() { printf '== setup: %s\n' "$*"; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  say "installing apt packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v go >/dev/null || { echo "setup: Go is not installed (need Go 1.26+: https://go.dev/dl/)" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup: Node.js/npm is not installed (need Node 20+)" >&2; exit 1; }

if [ ! -x tools/bin/wails ] || [ tools/wails/go.mod -nt tools/bin/wails ]; then
  say "building the wails CLI v2.9.2 into tools/bin"
  (cd tools/wails && go build -o ../bin/wails github.com/wailsapp/wails/v2/cmd/wails)
fi

if ((!APP_ONLY)); then
# Packaging tools (issue 15), each pinned in its own module under tools/ like wails:
# nfpm (the .deb), go-winres (talaria.exe's icon and version), go-licenses (the notice).
for t in nfpm:github.com/goreleaser/nfpm/v2/cmd/nfpm winres:github.com/tc-hib/go-winres golicenses:github.com/google/go-licenses/v2; do
  dir=${t%%:*} pkg=${t#*:}
  bin=$(basename "${pkg%/v2}")
  [ "$dir" = golicenses ] && bin=go-licenses
  if [ ! -x "tools/bin/$bin" ] || [ "tools/$dir/go.mod" -nt "tools/bin/$bin" ]; then
    say "building $bin into tools/bin"
    (cd "tools/$dir" && go build -o "../bin/$bin" "$pkg")
  fi
done

# staticcheck (issue 11): the Go linter `make lint` runs (part of `make test`), pinned in
# its own module under tools/ like wails; its checks are in staticcheck.conf.
if [ ! -x tools/bin/staticcheck ] || [ tools/staticcheck/go.mod -nt tools/bin/staticcheck ]; then
  say "building staticcheck into tools/bin"
  (cd tools/staticcheck && go build -o ../bin/staticcheck honnef.co/go/tools/cmd/staticcheck)
fi
# govulncheck and its database (issue 23), pinned in tools/govulncheck; `make vulncheck`.
scripts/vulndb.sh >/dev/null
fi

if [ ! -f .cache/gomod.stamp ] || [ go.sum -nt .cache/gomod.stamp ]; then
  say "downloading Go modules"
  go mod download
  mkdir -p .cache && touch .cache/gomod.stamp
fi

if [ ! -f frontend/node_modules/.package-lock.json ] || [ frontend/package-lock.json -nt frontend/node_modules/.package-lock.json ]; then
  say "installing frontend packages (npm ci)"
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error)
fi

# The rest is for the tests only.
((APP_ONLY)) && exit 0

# --- Hermes Agent for the tests (owner: hermes) ---------------------------------------
# hermes-agent 0.19.0 (dialect A, also `hermes acp`) in .cache/hermes-0.19.0 and the
# newest dialect-B Hermes in a Debian sid folder system in .cache/hermes-newest; quick
# when both are there. See the script's header.
scripts/hermes-setup.sh

# --- ACP agents for the tests (owner: acp) --------------------------------------------
# OpenCode (npm opencode-ai, exact version) in .cache/opencode-<version>; Hermes's ACP
# server comes with the Hermes install above. See the script's header.
scripts/acp-setup.sh

# --- MCP servers for the tests (owner: mcp) -------------------------------------------
# @modelcontextprotocol/server-filesystem and server-everything, pinned, from npm into
# .cache/mcp-servers (scripts/mcp-servers/package-lock.json); quick when installed.
scripts/mcp-setup.sh
