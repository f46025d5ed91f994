#!/usr/bin/env bash
# Prints what the build stamps into the binary (see the Makefile's LDFLAGS):
#   buildinfo.sh version   0.1.0 on a tag v0.1.0; else 0.1.0-dev+<commit>[.dirty]
#   buildinfo.sh debversion the same for Debian (dpkg orders "~" before everything)
#   buildinfo.sh commit    the full commit id ("" outside git)
#   buildinfo.sh date      the UTC build time, RFC 3339; $SOURCE_DATE_EPOCH when set
#                          (reproducible builds), else now
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=0.1.0 # the next release; bump it with the tag

version() {
  local tag short dirty=""
  if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
    echo "${tag#v}"
    return
  fi
  short=$(git rev-parse --short=8 HEAD 2>/dev/null) || { echo "$BASE-dev"; return; }
  git diff --quiet HEAD 2>/dev/null || dirty=.dirty
  echo "$BASE-dev+$short$dirty"
}

case "${1:-version}" in
version) version ;;
debversion) version | sed 's/-/~/' ;;
commit) git rev-parse HEAD 2>/dev/null || true ;;
date)
  if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ
  else
    date -u +%Y-%m-%dT%H:%M:%SZ
  fi
  ;;
*) echo "usage: $0 version|debversion|commit|date" >&2; exit 2 ;;
esac
