#!/usr/bin/env bash
# make demo: the whole job on embedded defaults. No API key, no Redis, no
# network: a simulated YouTube on a free loopback port, the embedded ledger,
# and a throwaway archive under .demo/. Leaves no process behind.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/ytrend}
DIR=.demo
rm -rf "$DIR"; mkdir -p "$DIR"

sim_pid=""
cleanup() {
  if [ -n "$sim_pid" ] && kill -0 "$sim_pid" 2>/dev/null; then
    kill "$sim_pid" 2>/dev/null || true
    wait "$sim_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Starting the simulated YouTube on a free loopback port"
# Created here, not by the background job's redirection: the loop below may
# read it before the job has opened it.
: >"$DIR/sim.out"
"$BIN" simulate --addr 127.0.0.1:0 >"$DIR/sim.out" 2>"$DIR/sim.log" &
sim_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^listening on \(http[^ ]*\).*/\1/p' "$DIR/sim.out" | head -n1)
  [ -n "$url" ] && break
  kill -0 "$sim_pid" 2>/dev/null || { cat "$DIR/sim.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "simulator did not start" >&2; cat "$DIR/sim.log" >&2; exit 1; }
echo "simulated YouTube at $url"

# Embedded ledger (no Redis), throwaway archive, the simulator's demo key.
export YTREND_CONFIG=schedule.yaml YTREND_DB="$DIR/demo.db" YOUTUBE_ENDPOINT="$url"
export YOUTUBE_API_KEY=ytrend-sim-key REDIS_URL=""
unset LOG_FORMAT

step "ytrend run --once: all 8 default regions, 4 pages each, through the budget"
"$BIN" run --once

step "ytrend quota status"
"$BIN" quota status

step "ytrend runs"
"$BIN" runs --limit 8

word=$("$BIN" search --json --limit 1 --sort views the 2>/dev/null | sed -n 's/.*"title": "\([^" ]*\).*/\1/p' | head -n1)
word=${word:-music}
step "ytrend search $word --limit 5"
"$BIN" search "$word" --limit 5

step "A refusal: a 2-unit budget, a 4-page fetch stops cleanly after 2 pages"
cat >"$DIR/tiny.yaml" <<'YAML'
credential: demo-tiny
costs: {videos.list: 1, search.list: 100}
limits:
  - {name: daily,  units: 2,    window: 24h, costs: {videos.list: 1}}
  - {name: search, units: 1000, window: 1h,  costs: {search.list: 100}}
YAML
set +e
YTREND_CONFIG="$DIR/tiny.yaml" "$BIN" fetch US --pages 4
code=$?
set -e
echo "exit status $code (75 = EX_TEMPFAIL: refused by the budget; the pages already fetched are stored)"
"$BIN" runs --region US --limit 2
[ "$code" -eq 75 ] || { echo "expected exit 75" >&2; exit 1; }

step "Done. Archive kept in $DIR/demo.db; try: YTREND_DB=$DIR/demo.db $BIN search <words>"
