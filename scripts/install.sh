#!/usr/bin/env bash
# Installs (or uninstalls) the built app the way a desktop expects it:
#   PREFIX/bin/talaria
#   PREFIX/lib/talaria/talaria-sidecar              (the sidecar alone, for remote hosts; when built)
#   PREFIX/share/applications/talaria.desktop      (Exec and TryExec point at the binary)
#   PREFIX/share/icons/hicolor/NxN/apps/talaria.png (16 ... 512)
#   PREFIX/share/metainfo/io.talaria.Desktop.metainfo.xml (AppStream)
#   PREFIX/share/man/man1/talaria.1.gz              (from `talaria --help`, if built)
# PREFIX defaults to ~/.local (user-local; nothing needs root); PREFIX=/usr or
# /usr/local installs system-wide. DESTDIR stages the tree elsewhere (packaging): then
# no cache is refreshed. Otherwise the desktop database and the icon cache are
# refreshed when their tools are present, so the launcher shows the app at once.
#
#   scripts/install.sh install|uninstall       (the Makefile's `make install/uninstall`)
set -euo pipefail
cd "$(dirname "$0")/.."

action=${1:?usage: install.sh install|uninstall}
PREFIX=${PREFIX:-$HOME/.local}
DESTDIR=${DESTDIR:-}
BIN=${BIN:-build/bin/talaria}
MAN=${MAN:-build/bin/talaria.1}
case "$PREFIX" in /*) ;; *) echo "install: PREFIX must be an absolute path, not $PREFIX" >&2; exit 2 ;; esac

bindir=$PREFIX/bin
libdir=$PREFIX/lib/talaria
datadir=$PREFIX/share
root=$DESTDIR
apps=$root$datadir/applications
hicolor=$root$datadir/icons/hicolor
metainfo=$root$datadir/metainfo
man1=$root$datadir/man/man1
SIZES=(16 24 32 48 64 128 256 512)
say() { printf 'install: %s\n' "$*"; }

refresh_caches() {
  [ -z "$DESTDIR" ] || return 0 # a staged tree: the package manager's triggers do it
  if command -v update-desktop-database >/dev/null && [ -d "$apps" ]; then
    update-desktop-database -q "$apps" || say "update-desktop-database failed (the launcher may need a new login)"
  fi
  if command -v gtk-update-icon-cache >/dev/null && [ -d "$hicolor" ]; then
    # -t: a user's ~/.local/share/icons/hicolor has no index.theme of its own.
    gtk-update-icon-cache -q -t -f "$hicolor" || say "gtk-update-icon-cache failed (icons may need a new login)"
  fi
}

case "$action" in
install)
  [ -x "$BIN" ] || { echo "install: $BIN is missing; run 'make build' first" >&2; exit 1; }
  install -Dm755 "$BIN" "$root$bindir/talaria"
  # The sidecar alone (no GUI libraries), copied to remote hosts; optional.
  if [ -x "${BIN}-sidecar" ]; then install -Dm755 "${BIN}-sidecar" "$root$libdir/talaria-sidecar"; fi
  entry=$(mktemp)
  sed "s|@BINDIR@|$bindir|g" build/linux/talaria.desktop.in >"$entry"
  install -Dm644 "$entry" "$apps/talaria.desktop"
  rm -f "$entry"
  for s in "${SIZES[@]}"; do
    install -Dm644 "build/linux/icons/${s}x${s}/talaria.png" "$hicolor/${s}x${s}/apps/talaria.png"
  done
  install -Dm644 build/linux/io.talaria.Desktop.metainfo.xml "$metainfo/io.talaria.Desktop.metainfo.xml"
  if [ -s "$MAN" ]; then
    install -d "$man1"
    gzip -9n <"$MAN" >"$man1/talaria.1.gz"
    chmod 644 "$man1/talaria.1.gz"
  else
    say "no man page at $MAN ('make man' needs help2man); skipped"
  fi
  refresh_caches
  say "installed $root$bindir/talaria and its desktop entry in $apps"
  case ":$PATH:" in *":$bindir:"*) ;; *) [ -n "$DESTDIR" ] || say "note: $bindir is not on your PATH; the launcher entry works regardless" ;; esac
  ;;
uninstall)
  rm -f "$root$bindir/talaria" "$root$libdir/talaria-sidecar" "$apps/talaria.desktop" "$metainfo/io.talaria.Desktop.metainfo.xml" "$man1/talaria.1.gz"
  rmdir "$root$libdir" 2>/dev/null || true # PREFIX/lib/talaria, when nothing else is in it
  for s in "${SIZES[@]}"; do rm -f "$hicolor/${s}x${s}/apps/talaria.png"; done
  # The "Start Talaria at login" entry of this user, if it starts the binary just removed.
  auto=${XDG_CONFIG_HOME:-$HOME/.config}/autostart/talaria.desktop
  if [ -z "$DESTDIR" ] && [ -f "$auto" ] && grep -qx "TryExec=$bindir/talaria" "$auto"; then
    rm -f "$auto"
    say "removed the login entry $auto"
  fi
  refresh_caches
  say "uninstalled Talaria from $root$PREFIX (your data folder is kept)"
  ;;
*) echo "usage: install.sh install|uninstall" >&2; exit 2 ;;
esac
