#!/usr/bin/env bash
# Builds govulncheck and the Go vulnerability database it reads, both pinned in
# tools/govulncheck/go.mod, for `make vulncheck` (part of `make lint`).
#
# vuln.go.dev is not reachable from the project's machines, but the Go module proxy is,
# and it carries golang.org/x/vulndb: its data/osv folder holds every report as OSV
# JSON. That module's own indexdb command turns the folder into the v1 database layout
# govulncheck reads with `-db file://DIR` (index/db.json, index/modules.json,
# index/vulns.json, ID/GO-*.json). Quick when both are there. Prints the database's
# folder on stdout.
#
# To take newer reports: `cd tools/govulncheck && go get golang.org/x/vulndb@master`.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '== vulndb: %s\n' "$*" >&2; }

for t in govulncheck:golang.org/x/vuln/cmd/govulncheck indexdb:golang.org/x/vulndb/cmd/indexdb; do
  bin=${t%%:*} pkg=${t#*:}
  if [ ! -x "tools/bin/$bin" ] || [ tools/govulncheck/go.mod -nt "tools/bin/$bin" ]; then
    say "building $bin into tools/bin"
    (cd tools/govulncheck && go build -o "../bin/$bin" "$pkg")
  fi
done

version=$(cd tools/govulncheck && go list -m -f '{{.Version}}' golang.org/x/vulndb)
db=$PWD/.cache/vulndb/$version
if [ ! -f "$db/index/db.json" ]; then
  src=$(cd tools/govulncheck && go mod download -json golang.org/x/vulndb | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src/data/osv" ] || { echo "vulndb: no data/osv in golang.org/x/vulndb@$version ($src)" >&2; exit 1; }
  say "building the vulnerability database of golang.org/x/vulndb@$version"
  rm -rf "$db.tmp"
  tools/bin/indexdb -vulns "$src/data/osv" -out "$db.tmp"
  rm -rf "$db" && mv "$db.tmp" "$db"
fi
echo "$db"
