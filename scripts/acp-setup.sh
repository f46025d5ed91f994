#!/usr/bin/env bash
# Installs the real ACP agents the ACP runtime's tests drive (besides Hermes's own ACP
# server, which scripts/hermes-setup.sh installs in .cache/hermes-0.19.0), idempotently:
# a second run returns at once.
#
#   .cache/opencode-<version>/   npm's opencode-ai at an exact version (its native
#                                binary comes in the opencode-<os>-<arch> package),
#                                started by the tests as `opencode acp`.
#
# npm's download cache (~/.npm) makes a repeat install on the same machine quick.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENCODE_VERSION=1.18.33 # keep equal to sidecar/acp/acptest.OpenCodeVersion
OC_DIR=.cache/opencode-${OPENCODE_VERSION}

say() { printf '== acp-setup: %s\n' "$*"; }
die() { printf 'acp-setup: %s\n' "$*" >&2; exit 1; }

case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) die "no OpenCode binary is published for $(uname -m)" ;;
esac
os=$(uname -s | tr 'A-Z' 'a-z')
bin="$OC_DIR/node_modules/opencode-$os-$arch/bin/opencode"
stamp="$OC_DIR/.talaria-installed"
if [ "$(cat "$stamp" 2>/dev/null)" != "opencode-ai@$OPENCODE_VERSION" ] || [ ! -x "$bin" ]; then
  say "installing opencode-ai@$OPENCODE_VERSION into $OC_DIR"
  rm -rf "$OC_DIR"
  mkdir -p "$OC_DIR"
  npm install --prefix "$OC_DIR" --no-audit --no-fund --loglevel=error --no-save "opencode-ai@$OPENCODE_VERSION" \
    || die "npm could not install opencode-ai@$OPENCODE_VERSION"
  [ -x "$bin" ] || die "opencode-ai@$OPENCODE_VERSION installed, but $bin is missing"
  v=$(HOME="$OC_DIR" XDG_CONFIG_HOME="$OC_DIR/.probe" XDG_DATA_HOME="$OC_DIR/.probe" XDG_CACHE_HOME="$OC_DIR/.probe" XDG_STATE_HOME="$OC_DIR/.probe" \
    OPENCODE_DISABLE_AUTOUPDATE=1 "$bin" --version 2>/dev/null || true)
  rm -rf "$OC_DIR/.probe"
  [ "$v" = "$OPENCODE_VERSION" ] || die "$bin says its version is '$v', not $OPENCODE_VERSION"
  printf '%s' "opencode-ai@$OPENCODE_VERSION" > "$stamp"
fi
