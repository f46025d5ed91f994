#!/usr/bin/env bash
# Builds the Debian package (the Makefile's `make package`) with nfpm (tools/nfpm) into
# build/dist/talaria_<version>_amd64.deb. It holds what `make install PREFIX=/usr`
# installs (the binary, the desktop entry, the hicolor icons, the AppStream metainfo,
# the man page from --help) plus /usr/share/doc/talaria: the copyright file, a
# changelog and the third-party notice. Depends is what dpkg-shlibdeps finds the
# binary links against (libgtk-3-0, libwebkit2gtk-4.0-37, libayatana-appindicator3-1,
# libc6, ...) and bubblewrap, which confines the agent's commands; gnome-keyring (the
# Secret Service for API keys) and openssh-client (agents on remote hosts) are
# recommended.
#   VERSION, COMMIT, BUILD_DATE come from the Makefile (scripts/buildinfo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=build/bin/talaria
VERSION=${VERSION:-$(scripts/buildinfo.sh version)}
DEBVERSION=$(echo "$VERSION" | sed 's/-/~/')
BUILD_DATE=${BUILD_DATE:-$(scripts/buildinfo.sh date)}
MAINTAINER=${MAINTAINER:-Talaria Desktop maintainers <maintainers@talaria.invalid>}
# Talaria's own licence: LICENSE at the repository's root (MIT, as Wails itself).
LICENSE_ID=MIT
EXTRA_DEPENDS=(bubblewrap)
OUT=build/dist
STAGE=build/pkgroot

[ -x "$BIN" ] || { echo "package: $BIN is missing (make build-only)" >&2; exit 1; }
[ -x "$BIN-sidecar" ] || { echo "package: $BIN-sidecar is missing (make build-only)" >&2; exit 1; }
[ -s build/bin/talaria.1 ] || { echo "package: build/bin/talaria.1 is missing (make man)" >&2; exit 1; }
rm -rf "$STAGE"
mkdir -p "$OUT" "$STAGE"

# The files, laid out by the same script as `make install`.
DESTDIR=$PWD/$STAGE PREFIX=/usr scripts/install.sh install >/dev/null
doc=$STAGE/usr/share/doc/talaria
install -d "$doc"
cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: Talaria Desktop
Comment: The binary includes Go modules, npm packages (the window), the Go standard
 library and SQLite, each under its own licence, listed with their texts in
 /usr/share/doc/talaria/THIRD_PARTY_NOTICES.gz and in the app's About view.

Files: *
Copyright: 2026 The Talaria Desktop authors
License: MIT
$(sed -e '1,4d' -e 's/^$/./' -e 's/^/ /' LICENSE)
EOF
go run ./scripts/notices -text "$STAGE/THIRD_PARTY_NOTICES"
gzip -9n <"$STAGE/THIRD_PARTY_NOTICES" >"$doc/THIRD_PARTY_NOTICES.gz"
rm "$STAGE/THIRD_PARTY_NOTICES"
# A native package's changelog (Debian Policy 12.7), one entry for this build.
changelog_date=$(date -u -R -d "$BUILD_DATE")
{
  echo "talaria ($DEBVERSION) unstable; urgency=medium"
  echo
  echo "  * Build of commit ${COMMIT:0:12}."
  echo
  echo " -- $MAINTAINER  $changelog_date"
} | gzip -9n >"$doc/changelog.gz"
find "$STAGE" -type d -exec chmod 755 {} +
find "$STAGE" -type f -exec chmod 644 {} +
chmod 755 "$STAGE/usr/bin/talaria" "$STAGE/usr/lib/talaria/talaria-sidecar"
# talaria-sidecar is static on purpose: it is copied to other machines (remote hosts,
# docs/remote.md), which may have none of this package's libraries.
install -d "$STAGE/usr/share/lintian/overrides"
printf 'talaria: statically-linked-binary [usr/lib/talaria/talaria-sidecar]\n' >"$STAGE/usr/share/lintian/overrides/talaria"
chmod 644 "$STAGE/usr/share/lintian/overrides/talaria"

# Depends: what the binary links against, as Debian's own tool says, plus bubblewrap.
shl=$(mktemp -d)
mkdir "$shl/debian"
printf 'Source: talaria\n\nPackage: talaria\nArchitecture: amd64\n' >"$shl/debian/control"
shlibs=$(cd "$shl" && dpkg-shlibdeps -O "$OLDPWD/$BIN" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
rm -rf "$shl"
[ -n "$shlibs" ] || { echo "package: dpkg-shlibdeps found no libraries for $BIN" >&2; exit 1; }
# The system SQLite (the Makefile's RELEASE_TAGS) at least as new as the one the
# store's tests run against (Debian 12's 3.40): the symbols say only 3.12.
depends=$(printf '%s\n' "$shlibs" | tr ',' '\n' | sed 's/^ *//' | grep . |
  sed 's/^libsqlite3-0 (>= [^)]*)$/libsqlite3-0 (>= 3.40)/'; printf '%s\n' "${EXTRA_DEPENDS[@]}")

cfg=$STAGE/../nfpm.yaml
{
  echo "name: talaria"
  echo "arch: amd64"
  echo "platform: linux"
  echo "version: \"$DEBVERSION\""
  echo "version_schema: none"
  echo "section: utils"
  echo "priority: optional"
  echo "maintainer: \"$MAINTAINER\""
  echo "vendor: Talaria Desktop"
  echo "license: $LICENSE_ID"
  echo "description: |-"
  echo "  desktop app for chatting with an AI agent that works on your machine"
  echo "  Talaria is a local, single-user desktop home for AI agents: the agent runs"
  echo "  commands, edits files in a workspace folder, asks clarifying questions and"
  echo "  asks permission before dangerous commands, confined by bubblewrap. It drives"
  echo "  its built-in agent for any OpenAI-compatible endpoint (Ollama, llama.cpp, LM"
  echo "  Studio, OpenAI, OpenRouter), Hermes Agent, or agents speaking the Agent"
  echo "  Client Protocol. Conversations are kept in SQLite on this machine; API keys"
  echo "  go to the system keyring."
  echo "depends:"
  printf '%s\n' "$depends" | sed 's/^/  - "/; s/$/"/'
  echo "recommends:"
  echo "  - gnome-keyring"
  echo "  - openssh-client"
  echo "contents:"
  echo "  - src: $PWD/$STAGE/usr/"
  echo "    dst: /usr/"
  echo "    type: tree"
  echo "    file_info:"
  echo "      owner: root"
  echo "      group: root"
} >"$cfg"

deb=$OUT/talaria_${DEBVERSION}_amd64.deb
rm -f "$OUT"/talaria_*.deb
SOURCE_DATE_EPOCH=$(date -u -d "$BUILD_DATE" +%s) tools/bin/nfpm package --config "$cfg" --packager deb --target "$deb" >/dev/null
echo "package: built $deb ($(du -h "$deb" | cut -f1); installed size $(dpkg-deb -f "$deb" Installed-Size) KiB)"
echo "package: Depends: $(dpkg-deb -f "$deb" Depends)"
echo "package: Recommends: $(dpkg-deb -f "$deb" Recommends)"
