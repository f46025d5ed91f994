#!/usr/bin/env bash
# Store benchmarks at scale: 10,000 sessions and 1,000,000 messages.
#
#   bench/store.sh           # reuse the generated database if it is there
#   bench/store.sh --fresh   # generate it again (about a minute on 2 cores)
#
# The database (about 450 MiB) is kept in $TALARIA_BENCH_DIR, by default
# ${XDG_CACHE_HOME:-~/.cache}/talaria-bench, so later runs skip the generation. `make
# bench` runs the same benchmark on a fresh database in a temporary folder. Prints a
# table: start-up check, sidebar page, opening a 5,000-message session, search p50/p95
# (alone and while a turn streams, beside plain FTS5, with the load average), appending
# a turn to a 10-row and a 10,000-row session, the store against plain SQL.
set -euo pipefail
cd "$(dirname "$0")/.."
export TALARIA_BENCH_DIR="${TALARIA_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/talaria-bench}"
mkdir -p "$TALARIA_BENCH_DIR"
if [[ "${1:-}" == "--fresh" ]]; then
	rm -f "$TALARIA_BENCH_DIR"/scale.db "$TALARIA_BENCH_DIR"/scale.db-wal "$TALARIA_BENCH_DIR"/scale.db-shm
fi
exec go test -tags sqlite_fts5 -run '^$' -bench '^BenchmarkStoreAtScale$' -benchtime 1x -timeout 30m ./backend/store/
