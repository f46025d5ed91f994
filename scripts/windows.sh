#!/usr/bin/env bash
# Windows and macOS, checked from this Linux machine (the Makefile's `make windows` and
# `make platforms`):
#   windows.sh build   talaria.exe cross-built with mingw-w64, with the app icon, a
#                      version resource and a GUI manifest (go-winres), into build/bin/
#   windows.sh tests   every Go test package of backend/ and sidecar/ compiled for
#                      Windows (`go test -c`, cgo through mingw-w64), so Windows-only
#                      files keep compiling; `GOOS=darwin go vet` of the same; a failure
#                      names the files that broke the build
#   windows.sh wine    the sidecar's protocol and tools tests run under wine (Debian's
#                      wine64), where it is installed; prints which pass
# VERSION and LDFLAGS come from the Makefile (scripts/buildinfo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

TAGS=${TAGS:-sqlite_fts5}
CC_WIN=${CC_WIN:-x86_64-w64-mingw32-gcc}
OUTDIR=build/windows
VERSION=${VERSION:-$(scripts/buildinfo.sh version)}
say() { printf 'windows: %s\n' "$*"; }

need_mingw() {
  command -v "$CC_WIN" >/dev/null || { echo "windows: $CC_WIN is missing: apt-get install gcc-mingw-w64-x86-64 (make setup does)" >&2; exit 1; }
}

# culprits LOG: the source files named by compiler errors in LOG, once each.
culprits() { grep -oE '^[^ :]+\.(go|c|h|s):[0-9]+' "$1" | sed 's/:[0-9]*$//' | sort -u | tr '\n' ' '; }

build() {
  need_mingw
  [ -f frontend/dist/index.html ] || { echo "windows: frontend/dist is not built (make build-only first)" >&2; exit 1; }
  # The file version is four numbers: 0.1.0-dev+abc -> 0.1.0.0.
  local numeric
  numeric=$(echo "$VERSION" | grep -oE '^[0-9]+(\.[0-9]+){0,2}' || echo 0.0.0)
  while [ "$(echo "$numeric" | tr -cd . | wc -c)" -lt 3 ]; do numeric=$numeric.0; done
  # The resource goes beside main.go (Go links every *_windows_amd64.syso of the main
  # package); it is generated, never committed (.gitignore).
  tools/bin/go-winres simply --arch amd64 --out rsrc --manifest gui --icon build/appicon.png \
    --product-name Talaria --file-description "Talaria Desktop" --original-filename talaria.exe \
    --product-version "$VERSION" --file-version "$numeric" --copyright "The Talaria Desktop authors"
  mkdir -p build/bin
  GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=$CC_WIN \
    go build -trimpath -tags "desktop,production,$TAGS" -ldflags "-w -s -H windowsgui ${LDFLAGS:-}" -o build/bin/talaria.exe .
  # The agent process beside it, which talaria.exe starts (and `talaria.exe sidecar`
  # hands over to); a GUI-subsystem program too, so starting it opens no console.
  GOOS=windows GOARCH=amd64 CGO_ENABLED=0 \
    go build -trimpath -ldflags "-w -s -H windowsgui -X main.version=$VERSION" -o build/bin/talaria-sidecar.exe ./cmd/talaria-sidecar
  # What Explorer shows: the icon and the version resource, read back from the file.
  local res
  res=$(mktemp -d)
  tools/bin/go-winres extract --dir "$res" build/bin/talaria.exe >/dev/null 2>&1 || true
  ls "$res"/*.ico >/dev/null 2>&1 && grep -q "\"ProductVersion\": \"$VERSION\"" "$res/winres.json" || {
    rm -rf "$res"
    echo "windows: FAIL: talaria.exe has no icon or no version resource" >&2
    exit 1
  }
  rm -rf "$res"
  say "built build/bin/talaria.exe ($(du -h build/bin/talaria.exe | cut -f1), version $VERSION, resource file version $numeric) and talaria-sidecar.exe ($(du -h build/bin/talaria-sidecar.exe | cut -f1))"
}

tests() {
  need_mingw
  mkdir -p "$OUTDIR/tests"
  local log=$OUTDIR/tests.log pkgs
  # The packages with tests for Windows (listed as Windows sees them: a suite that is
  # Linux-only by its build constraints, such as the bubblewrap attack suite, has none).
  mapfile -t pkgs < <(GOOS=windows GOARCH=amd64 CGO_ENABLED=1 go list -e -tags "$TAGS" \
    -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./backend/... ./sidecar/... | grep .)
  # One go command for all packages: it builds them in parallel and keeps going.
  if ! GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=$CC_WIN \
    go test -c -tags "$TAGS" -o "$OUTDIR/tests/" "${pkgs[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    echo "windows: FAIL: the Go tests of backend/ and sidecar/ do not compile for Windows; broken by: $(culprits "$log")" >&2
    echo "windows: (code for Unix only goes in a _unix.go/_linux.go file or behind //go:build !windows, with a _windows.go counterpart)" >&2
    exit 1
  fi
  say "ok: ${#pkgs[@]} test packages of backend/ and sidecar/ compile for windows/amd64 ($OUTDIR/tests/)"
  log=$OUTDIR/darwin-vet.log
  # No macOS SDK here, so cgo is off: cgo-only files are left out, the rest is vetted.
  if ! GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go vet -tags "$TAGS" ./backend/... ./sidecar/... >"$log" 2>&1; then
    cat "$log" >&2
    echo "windows: FAIL: GOOS=darwin go vet ./backend/... ./sidecar/... fails; broken by: $(culprits "$log")" >&2
    exit 1
  fi
  say "ok: GOOS=darwin go vet ./backend/... ./sidecar/... passes"
}

wine_run() {
  local wine
  wine=$(command -v wine64 || command -v wine || ls /usr/lib/wine/wine64 2>/dev/null || true)
  if [ -z "$wine" ]; then
    say "wine is not installed: the Windows test binaries were compiled, not run"
    return 0
  fi
  need_mingw
  export WINEPREFIX=${WINEPREFIX:-$PWD/.cache/wine}
  export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  local sys32=$WINEPREFIX/drive_c/windows/system32
  if [ ! -d "$sys32" ]; then
    say "creating the wine prefix $WINEPREFIX"
    "$wine" cmd /c exit >/dev/null 2>&1 || true
  fi
  # Debian 12's wine 8.0 has no bcryptprimitives.dll, without which no Go >= 1.22
  # program starts ("bcryptprimitives.dll not found"); Go loads it from system32 only.
  if [ ! -f "$sys32/bcryptprimitives.dll" ] || [ scripts/winehelper/bcryptprimitives.c -nt "$sys32/bcryptprimitives.dll" ]; then
    "$CC_WIN" -O2 -shared -o "$sys32/bcryptprimitives.dll" scripts/winehelper/bcryptprimitives.c -lbcrypt
  fi
  local report=$OUTDIR/wine.txt total_pass=0 total_run=0 t
  : >"$report"
  # The real talaria.exe: its version, and its sidecar (talaria-sidecar.exe, which
  # `talaria.exe sidecar` hands over to) answering rpc.hello on stdio.
  if [ -f build/bin/talaria.exe ]; then
    local v hello
    v=$(timeout 60 "$wine" build/bin/talaria.exe --version 2>/dev/null | head -1 | tr -d '\r')
    [ "$v" = "talaria $VERSION" ] || { echo "windows: FAIL: talaria.exe --version under wine said '$v', want 'talaria $VERSION'" >&2; exit 1; }
    hello=$(printf '{"jsonrpc":"2.0","id":1,"method":"rpc.hello","params":{"protocol":1,"host_version":"check"}}\n' |
      timeout 60 "$wine" build/bin/talaria.exe sidecar 2>/dev/null | head -1)
    case "$hello" in
    *'"runtime":"builtin"'*) echo "talaria.exe under wine: --version and the sidecar's rpc.hello answer" | tee -a "$report" ;;
    *) echo "windows: FAIL: talaria.exe sidecar under wine did not answer rpc.hello: $hello" >&2; exit 1 ;;
    esac
  fi
  for t in sidecar/protocol sidecar/builtin/tools; do
    local exe log
    exe=$PWD/$OUTDIR/tests/$(basename "$t").test.exe
    log=$OUTDIR/wine-$(basename "$t").log
    [ -f "$exe" ] || { echo "windows: $exe is missing (windows.sh tests first)" >&2; exit 1; }
    (cd "$t" && timeout 300 "$wine" "$exe" -test.v -test.timeout 240s) >"$log" 2>&1 || true
    local p f s failed
    p=$(grep -c '^--- PASS' "$log" || true)
    f=$(grep -c '^--- FAIL' "$log" || true)
    s=$(grep -c '^--- SKIP' "$log" || true)
    failed=$(sed -n 's/^--- FAIL: \([^ ]*\).*/\1/p' "$log" | tr '\n' ' ')
    if [ $((p + f + s)) = 0 ]; then
      tail -20 "$log" >&2
      echo "windows: FAIL: $exe did not run under wine (see $log)" >&2
      exit 1
    fi
    total_pass=$((total_pass + p)) total_run=$((total_run + p + f))
    printf '%s under wine: %d of %d tests pass%s%s\n' "$t" "$p" $((p + f)) \
      "$([ "$s" = 0 ] || echo ", $s skipped")" "$([ -z "$failed" ] || echo "; failing: $failed")" | tee -a "$report"
  done
  say "$("$wine" --version 2>/dev/null): $total_pass of $total_run top-level tests pass ($report; logs in $OUTDIR/wine-*.log)"
}

case "${1:-}" in
build) build ;;
tests) tests ;;
wine) wine_run ;;
*) echo "usage: windows.sh build|tests|wine" >&2; exit 2 ;;
esac
