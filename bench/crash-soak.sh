#!/usr/bin/env bash
# Crash-safety soak: the crash test of backend/crashtest with many more kills.
#
#   bench/crash-soak.sh            # 500 kills
#   bench/crash-soak.sh 2000       # as many as you like
#   CRASHTEST_SEED=123 bench/crash-soak.sh 500   # replay a run (the seed is logged)
#
# Each kill SIGKILLs a process running the real store, turn runner and sidecar at a
# random point; after each one the database must pass integrity_check, every turn whose
# done was reported must be complete, every admitted user message present, and no
# sidecar may outlive the killed app. About 0.6 s per kill with -race on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
kills="${1:-${CRASHTEST_KILLS:-500}}"
timeout=$(( kills * 3 / 2 + 120 ))s
echo "crash soak: ${kills} kills (timeout ${timeout})"
CRASHTEST_KILLS="$kills" exec go test -race -tags sqlite_fts5 -count=1 -timeout "$timeout" -v \
	-run '^TestCrashSafety$' ./backend/crashtest/
