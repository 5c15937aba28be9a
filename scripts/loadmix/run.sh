#!/bin/bash
# run.sh: one load run from outside, as BENCHMARKS.md reports them.
#
#   scripts/loadmix/run.sh YTREND CONFIG ARCHIVE PATHS [SECONDS]
#
# Starts `YTREND --config CONFIG --db ARCHIVE serve` (CONFIG sets
# serve.listen, read from it, and a rate limit loose enough for one client),
# waits until it answers, runs wrk with 2 threads and 50 connections over
# the PATHS file (from loadmix), and prints wrk's latencies and throughput,
# the answers by class, and the server's own CPU time per request (utime +
# stime from /proc around the run, over wrk's request count).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 YTREND CONFIG ARCHIVE PATHS [SECONDS]" >&2; exit 2; }
bin=$1 cfg=$2 db=$3 paths=$4 secs=${5:-30}
here=$(cd "$(dirname "$0")" && pwd)
listen=$(awk '$1 == "listen:" {print $2; exit}' "$cfg")
[ -n "$listen" ] || { echo "$cfg sets no serve.listen" >&2; exit 2; }
log=$(mktemp)
"$bin" --config "$cfg" --db "$db" serve >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log" "$out"' EXIT
out=$(mktemp)
until curl -fs -o /dev/null "http://$listen/api/v1/regions"; do
  kill -0 $pid 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1 # polling the condition (the server answers), not a guess at a delay
done
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
ticks=$(getconf CLK_TCK)
before=$(cpu)
wrk -t2 -c50 -d"${secs}s" --latency -s "$here/paths.lua" "http://$listen" -- "$paths" 2 >"$out"
after=$(cpu)
grep -E '50%|90%|99%|requests in|Requests/sec|answers' "$out"
reqs=$(awk '/requests in/ {print $1; exit}' "$out")
awk -v a="$after" -v b="$before" -v n="$reqs" -v t="$ticks" \
  'BEGIN { printf "server CPU per request: %.3f ms\n", (a - b) * 1000 / t / n }'
