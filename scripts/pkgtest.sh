#!/usr/bin/env bash
# The .deb on a clean Debian 12 (the Makefile's `make pkgtest`, part of `make test`):
#   1. lintian reports no error for build/dist/talaria_*.deb;
#   2. a fresh folder system (debootstrap --variant=minbase bookworm) gets it with
#      `dpkg -i` (which stops at the missing dependencies) and `apt-get -f install`,
#      which installs exactly what the package declares, nothing of this machine's;
#   3. inside it the installed `talaria --version` prints the version (its libraries
#      load) and every library it links resolves there; then talaria-drivers (the same
#      app with its test drivers, which the package does not ship; copied in) runs
#      `--selftest` (its own scripted model) with the installed package's libraries
#      under this machine's Xvfb and a private D-Bus session (the X and D-Bus sockets
#      are abstract, so the folder system reaches them without sharing any file);
#   4. the desktop entry, icons and metainfo are where the launcher looks, and
#      `dpkg -r` removes them again.
# The folder system is made once and kept as .cache/pkgtest/bookworm-minbase.tar with
# apt's downloaded packages in .cache/pkgtest/archives/, so a later run unpacks it in
# seconds and installs the dependencies without downloading them again; every run still
# starts from the untouched minbase. Runs as root (chroot, mounts).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=$PWD/.cache/pkgtest
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
OUT=$(realpath -m build/smoke)
deb=$(ls build/dist/talaria_*_amd64.deb 2>/dev/null | head -1 || true)
drivers=build/bin/talaria-drivers
say() { printf 'pkgtest: %s\n' "$*"; }
fail() {
  echo "pkgtest: FAIL: $*" >&2
  for f in "$OUT"/pkgtest-*.log; do [ -s "$f" ] && { echo "--- $f" >&2; tail -30 "$f" >&2; }; done
  exit 1
}
[ -n "$deb" ] || fail "no package in build/dist (make package)"
[ -x "$drivers" ] || fail "$drivers is missing (make build-drivers-only)"
[ "$(id -u)" = 0 ] || fail "needs root (chroot and mounts); run it as root or with sudo"
for t in debootstrap lintian xvfb-run dbus-run-session; do
  command -v "$t" >/dev/null || fail "$t is missing (scripts/setup.sh installs it)"
done
mkdir -p "$CACHE/archives/partial" "$OUT"
rm -f "$OUT"/pkgtest-*.log
start=$SECONDS

# 1. lintian.
lintian --fail-on error "$deb" >"$OUT/pkgtest-lintian.log" 2>&1 ||
  fail "lintian reports errors for $deb"
say "ok: lintian reports no error ($(grep -c '^W:' "$OUT/pkgtest-lintian.log" || true) warnings; $OUT/pkgtest-lintian.log)"

# 2. The folder system, made once.
base=$CACHE/bookworm-minbase.tar
if [ ! -s "$base" ]; then
  say "making the Debian 12 folder system (debootstrap minbase, once; kept in $base)"
  tmp=$(mktemp -d "$CACHE/make.XXXXXX")
  debootstrap --variant=minbase --cache-dir="$CACHE/archives" bookworm "$tmp" "$MIRROR" >"$OUT/pkgtest-debootstrap.log" 2>&1 ||
    { rm -rf "$tmp"; fail "debootstrap failed"; }
  echo "deb $MIRROR bookworm main" >"$tmp/etc/apt/sources.list"
  echo "deb $MIRROR bookworm-updates main" >>"$tmp/etc/apt/sources.list"
  chroot "$tmp" apt-get update -qq >>"$OUT/pkgtest-debootstrap.log" 2>&1 || { rm -rf "$tmp"; fail "apt-get update in the folder system failed"; }
  chroot "$tmp" apt-get clean
  tar -C "$tmp" -cf "$base.part" . && mv "$base.part" "$base"
  rm -rf "$tmp"
fi

root=$(mktemp -d "$CACHE/root.XXXXXX")
mounted=()
cleanup() {
  local m
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
tar -C "$root" -xf "$base"
for m in proc sys dev dev/pts dev/shm; do
  case $m in
  proc) mount -t proc proc "$root/proc" ;;
  sys) mount -t sysfs sysfs "$root/sys" ;;
  dev/shm) mkdir -p "$root/dev/shm" && mount -t tmpfs -o mode=1777 shm "$root/dev/shm" ;;
  *) mount --bind "/$m" "$root/$m" ;;
  esac
  mounted+=("$root/$m")
done
mount --bind "$CACHE/archives" "$root/var/cache/apt/archives"
mounted+=("$root/var/cache/apt/archives")
cp /etc/resolv.conf "$root/etc/resolv.conf"
# No service starts inside (policy-rc.d), and dpkg skips fsync.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
echo 'force-unsafe-io' >"$root/etc/dpkg/dpkg.cfg.d/unsafe-io"
cp "$deb" "$root/tmp/talaria.deb"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

if in_root dpkg -i /tmp/talaria.deb >"$OUT/pkgtest-install.log" 2>&1; then
  fail "dpkg -i succeeded on a minbase system: the package declares no dependencies"
fi
grep -q 'dependency problems' "$OUT/pkgtest-install.log" || fail "dpkg -i failed for another reason than dependencies"
# Refresh the lists only when the cached ones no longer match the mirror.
if ! in_root apt-get -f install -y -q --no-install-recommends >>"$OUT/pkgtest-install.log" 2>&1; then
  in_root apt-get update -qq >>"$OUT/pkgtest-install.log" 2>&1 || true
  in_root apt-get -f install -y -q --no-install-recommends >>"$OUT/pkgtest-install.log" 2>&1 ||
    fail "apt-get -f install could not install the package's dependencies"
fi
in_root dpkg-query -W -f='${Status}' talaria | grep -q 'install ok installed' || fail "talaria is not installed after apt-get -f install"
n=$(grep -c '^Setting up ' "$OUT/pkgtest-install.log" || true)
say "ok: dpkg -i, then apt-get -f install set up $n packages in a fresh Debian 12 ($((SECONDS - start)) s so far)"

# 3. The installed binary.
v=$(in_root talaria --version | head -1)
[ "$v" = "talaria $(dpkg-deb -f "$deb" Version | sed 's/~/-/')" ] || fail "talaria --version printed '$v'"
say "ok: talaria --version: $v"
in_root man -w talaria >/dev/null 2>&1 || [ -f "$root/usr/share/man/man1/talaria.1.gz" ] || fail "no man page installed"
in_root ldd /usr/bin/talaria >"$OUT/pkgtest-ldd.log" 2>&1 || fail "ldd /usr/bin/talaria failed"
grep -q 'not found' "$OUT/pkgtest-ldd.log" && fail "the installed talaria links a library the package does not bring: $(grep 'not found' "$OUT/pkgtest-ldd.log" | tr -s ' \t' ' ')"
say "ok: every library the installed talaria links is installed ($(grep -c '=>' "$OUT/pkgtest-ldd.log") libraries)"
# talaria-sidecar, what remote hosts get: static (it links nothing), and it runs.
sc=/usr/lib/talaria/talaria-sidecar
[ -x "$root$sc" ] || fail "$sc is not installed"
readelf -lW "$root$sc" | grep -q 'INTERP' && fail "$sc is not statically linked (it names an interpreter)"
in_root "$sc" sidecar --help >/dev/null 2>&1 || fail "$sc sidecar --help failed"
say "ok: $sc is statically linked and runs"
# The app starts talaria-sidecar as its agent process; `talaria sidecar` hands over to
# it (the release binary does not link the sidecar): both answer rpc.hello.
hello='{"jsonrpc":"2.0","id":1,"method":"rpc.hello","params":{"protocol":1,"host_version":"check"}}'
for cmd in "$sc sidecar" "talaria sidecar"; do
  a=$(echo "$hello" | in_root $cmd 2>/dev/null | head -1)
  case "$a" in *'"runtime":"builtin"'*) ;; *) fail "$cmd did not answer rpc.hello: $a" ;; esac
done
say "ok: talaria sidecar hands over to $sc; both answer rpc.hello"
# talaria-drivers goes beside it, outside the package's files (dpkg -r must not see it).
install -m 755 "$drivers" "$root/usr/local/bin/talaria-drivers"
install -m 755 "$drivers-sidecar" "$root/usr/local/bin/talaria-drivers-sidecar"

# X11 listens on a path socket only (the abstract one is off by default): share the
# folder of sockets, nothing else.
mkdir -p /tmp/.X11-unix "$root/tmp/.X11-unix"
mount --bind /tmp/.X11-unix "$root/tmp/.X11-unix"
mounted+=("$root/tmp/.X11-unix")
export XDG_RUNTIME_DIR=$root/tmp/xdg
mkdir -m 700 -p "$XDG_RUNTIME_DIR"
set +e
# The X authority file and the session bus's socket go inside the folder system, where
# the app finds them at the same paths less the root.
sed "s|<listen>unix:tmpdir=/tmp</listen>|<listen>unix:dir=$root/tmp</listen>|" /usr/share/dbus-1/session.conf >"$CACHE/session.conf"
selftest() {
  rm -rf "$root/tmp/selftest-data"
  timeout 240 xvfb-run -a -n $((200 + RANDOM % 700)) -f "$root/tmp/xauthority" -s "-screen 0 1280x800x24" \
    dbus-run-session --config-file="$CACHE/session.conf" -- \
    bash -c 'exec chroot "$0" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 DISPLAY="$DISPLAY" XAUTHORITY=/tmp/xauthority \
      DBUS_SESSION_BUS_ADDRESS="${DBUS_SESSION_BUS_ADDRESS//$0/}" XDG_RUNTIME_DIR=/tmp/xdg \
      talaria-drivers --selftest --data-dir /tmp/selftest-data' "$root" >"$OUT/pkgtest-selftest.log" 2>&1
}
selftest
rc=$?
# GTK could not open the Xvfb display (seen once in many runs on this shared machine):
# that is the test's X server, not the app; one more try with a fresh server.
if [ $rc != 0 ] && grep -q 'failed to init GTK' "$OUT/pkgtest-selftest.log"; then
  say "the app could not open the Xvfb display (failed to init GTK); once more with a new server"
  cp "$OUT/pkgtest-selftest.log" "$OUT/pkgtest-selftest-1.log"
  selftest
  rc=$?
fi
set -e
[ $rc = 0 ] || fail "talaria-drivers --selftest with the installed package failed (exit $rc)"
grep -q 'selftest passed' "$OUT/pkgtest-selftest.log" || fail "the self-test did not report passing"
grep -q 'Unable to get session bus' "$OUT/pkgtest-selftest.log" && fail "the app inside did not reach the session bus"
say "ok: talaria-drivers --selftest passed under Xvfb with the installed package's libraries and its scripted model"

# 4. Where the launcher looks, then removal.
for f in usr/share/applications/talaria.desktop usr/share/icons/hicolor/256x256/apps/talaria.png \
  usr/share/metainfo/io.talaria.Desktop.metainfo.xml usr/share/doc/talaria/copyright; do
  [ -f "$root/$f" ] || fail "/$f is not installed"
done
grep -qx 'Exec=/usr/bin/talaria' "$root/usr/share/applications/talaria.desktop" || fail "the installed entry does not start /usr/bin/talaria"
in_root dpkg -r talaria >>"$OUT/pkgtest-install.log" 2>&1 || fail "dpkg -r talaria failed"
[ ! -e "$root/usr/bin/talaria" ] && [ ! -e "$root/usr/lib/talaria/talaria-sidecar" ] && [ ! -e "$root/usr/share/applications/talaria.desktop" ] || fail "dpkg -r left files behind"
say "ok: the entry, icons and metainfo were installed, and dpkg -r removed them"
say "ok ($((SECONDS - start)) s; the package: $(du -h "$deb" | cut -f1), Depends: $(dpkg-deb -f "$deb" Depends))"
