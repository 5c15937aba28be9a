#!/usr/bin/env bash
# make test's two halves at once: the suite under -race (make test-race)
# and, beside it at the lowest CPU priority, the full-size search checks
# and the fuzz runs (make test-checks). The race run leaves about a quarter
# of the two cores idle while its tests wait on Redis, child processes and
# timers; the checks take that time instead of a minute after it
# (BENCHMARKS.md, issue 21). The checks' output follows the race run's,
# whole, and the run fails when either half fails.
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}

log=$(mktemp "${TMPDIR:-/tmp}/ytrend-checks.XXXXXX")
# In a session of its own, so that an interrupt, which reaches only the
# terminal's foreground group, stops it too (the trap).
setsid nice -n 19 "$MAKE" --no-print-directory test-checks >"$log" 2>&1 &
checks=$!
trap 'kill -- -"$checks" 2>/dev/null; rm -f "$log"' EXIT

"$MAKE" --no-print-directory test-race
race=$?
wait "$checks"
rest=$?
trap - EXIT

echo "== make test-checks (run beside the race run, at the lowest CPU priority)"
cat "$log"
rm -f "$log"
[ "$race" -eq 0 ] && [ "$rest" -eq 0 ]
