#!/usr/bin/env bash
# Installs the real MCP servers the tests run, from npm, into .cache/mcp-servers:
# @modelcontextprotocol/server-filesystem, server-everything and server-memory at
# the versions pinned in scripts/mcp-servers/package.json (every dependency pinned by its
# package-lock.json). Idempotent: nothing is done when the installed lock file matches.
# The Go tests find them through sidecar/mcp/mcptest (which runs this script itself
# when they are missing).
set -euo pipefail
cd "$(dirname "$0")/.."

SRC=scripts/mcp-servers
DEST=.cache/mcp-servers

if [ -f "$DEST/node_modules/.package-lock.json" ] && cmp -s "$SRC/package-lock.json" "$DEST/package-lock.json" \
  && [ -f "$DEST/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ] \
  && [ -f "$DEST/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] \
  && [ -f "$DEST/node_modules/@modelcontextprotocol/server-memory/dist/index.js" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "mcp-setup: npm is not installed (need Node 20+)" >&2; exit 1; }
printf '== setup: %s\n' "installing the test MCP servers (server-filesystem, server-everything, server-memory) into $DEST"
mkdir -p "$DEST"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
(cd "$DEST" && npm ci --no-audit --no-fund --loglevel=error)
