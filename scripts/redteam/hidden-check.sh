#!/bin/bash
# hidden-check.sh: issue 20's hidden check, by hand, with real processes.
#
# Two `ytrend run` on one private Redis (a unix socket, no port to race),
# each with its own archive, a file:// replica, a simulated YouTube, four
# regions every 2-3 s. SIGKILL the leader after 16 runs; after the takeover
# compare the new leader's `chart --json` (at the old term's last chart of
# each region) and `runs --json` with the old term's replicated state
# (restored from a copy of the replica holding only the old term); then
# `archive restore --at` a time between two fetches against `chart --at`;
# then `serve --follow` on a third path against the leader's --serve.
# Prints FAIL=0 when everything matched.
#
# usage: scripts/redteam/hidden-check.sh [WORKDIR] (default /tmp/ytrend-hidden-check)
# needs: redis-server, jq, python3, curl, and bin/ytrend (go build -o bin/ytrend ./cmd/ytrend)
set -u
B=${YTREND:-$(cd "$(dirname "$0")/../.." && pwd)/bin/ytrend}
D=${1:-/tmp/ytrend-hidden-check}
export REDIS_URL=unix://$D/redis.sock
export YOUTUBE_API_KEY=ytrend-sim-key
start_redis() {
  [ -S $D/redis.sock ] && redis-cli -s $D/redis.sock ping >/dev/null 2>&1 && return
  redis-server --port 0 --unixsocket $D/redis.sock --save '' --appendonly no --daemonize yes --pidfile $D/redis.pid --logfile $D/redis.log
  for i in $(seq 50); do redis-cli -s $D/redis.sock ping >/dev/null 2>&1 && return; sleep 0.1; done
}
# new_world NAME: fresh dir W with simulate running and config
new_world() {
  W=$D/$1; rm -rf $W; mkdir -p $W
  ( $B simulate --addr 127.0.0.1:0 > $W/sim.out 2> $W/sim.err & echo $! > $W/sim.pid )
  for i in $(seq 100); do grep -q listening $W/sim.out 2>/dev/null && break; sleep 0.1; done
  export YOUTUBE_ENDPOINT=$(sed -n 's/^listening on //p' $W/sim.out | head -1)
  cat > $W/cfg.yaml <<Y
credential: hc-$1-$$
redis: {epoch_check: 500ms}
scheduler: {leader_ttl: 2s, maintenance: "off"}
archive: {replicas: ["file://$W/replica"], sync_interval: 200ms, follow_interval: 200ms}
serve: {rate_limit: {requests: 1000000, window: 1m}}
regions:
  - {code: US, cron: "@every 2s", pages: 2}
  - {code: GB, cron: "@every 2s", pages: 2}
  - {code: DE, cron: "@every 3s", pages: 1}
  - {code: JP, cron: "@every 3s", pages: 1}
Y
  export YTREND_CONFIG=$W/cfg.yaml
}
# start_run NAME: ytrend run with its own archive W/NAME.db, serve+listen on :0
start_run() {
  ( exec $B run --db $W/$1.db --listen 127.0.0.1:0 --serve 127.0.0.1:0 --log-format json >> $W/$1.log 2>&1 & echo $! > $W/$1.pid )
}
pid() { cat $W/$1.pid; }
# addr NAME which: which= metrics|serve
serve_addr() { grep -o '"msg":"serving the archive[^}]*' $W/$1.log | grep -o 'http://127.0.0.1:[0-9]*' | tail -1; }
listen_addr() { grep -o 'http://127.0.0.1:[0-9]*' $W/$1.log | head -1; }
is_leader() { grep -c 'leader: acquired\|became leader\|leading' $W/$1.log; }
waitfor() { # waitfor SECS cmd...
  local s=$1; shift; local end=$((SECONDS+s)); while ! "$@"; do [ $SECONDS -ge $end ] && { echo "TIMEOUT: $*"; return 1; }; sleep 0.2; done; }
cleanup() { for f in $W/*.pid; do kill -9 $(cat $f) 2>/dev/null; done; }
trap cleanup EXIT
new_world s1
start_redis
start_run a; start_run b
waitfor 30 bash -c "grep -q 'leader: leading' $W/a.log $W/b.log" || exit 1
if grep -q 'leader: leading' $W/a.log; then L=a; S=b; else L=b; S=a; fi
echo "leader=$L standby=$S"
waitfor 60 bash -c "[ \$(grep -c 'run finished' $W/$L.log) -ge 16 ]" || exit 1
waitfor 30 grep -q "standby: following the leader's replica" $W/$S.log || exit 1
# kill -9 mid-writes: right after a run starts storing pages
KILLT=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
kill -9 $(pid $L)
echo "killed $L at $KILLT"
mkdir -p $W/oldlocal; cp $W/$L.db* $W/oldlocal/
# replicated position of the old term, from the replica files
OLDTERM=$(ls -d $W/replica/term-* | sort | tail -1)
echo "old term: $(basename $OLDTERM) max txid: $(ls $OLDTERM/ltx/0 | sort | tail -1)"
waitfor 60 bash -c "grep -q 'replication: streaming the archive' <(grep -v '$(basename $OLDTERM)' $W/$S.log)" || { tail -20 $W/$S.log; exit 1; }
grep -o '"msg":"takeover[^}]*' $W/$S.log
$B archive status --json --db $W/$S.db > $W/status.json; jq -c . $W/status.json
# the old term's replicated state: restore only the old term (a replica copy without the new term)
mkdir -p $W/oldrepl; cp -r $W/replica/ltx $OLDTERM $W/oldrepl/
$B archive restore --replica file://$W/oldrepl --out $W/oldrepl.db || exit 1
R=$($B runs --json --db $W/oldrepl.db --limit 100000)
N=$($B runs --json --db $W/$S.db --limit 100000)
echo "old replicated runs: $(echo "$R" | jq length); old local runs: $($B runs --json --db $W/oldlocal/$L.db --limit 100000 | jq length); new leader runs: $(echo "$N" | jq length)"
FAIL=0
# every replicated run in the new leader, same fields (a crashed 'running' one may be marked crashed)
jq -n --argjson r "$R" --argjson n "$N" '
  ($n | map({key: (.id|tostring), value: .}) | from_entries) as $nm
  | $r[] | . as $o | $nm[.id|tostring] as $x
  | if $x == null then "MISSING run \(.id) \(.region) \(.status)"
    elif ($x.region != $o.region or $x.started_at != $o.started_at or $x.pages < $o.pages or ($o.status != "running" and ($x.status != $o.status or $x.videos != $o.videos))) then "DIFF \($o|tojson) vs \($x|tojson)"
    else empty end' -r | tee $W/runs.diff
[ -s $W/runs.diff ] && FAIL=1
for reg in US GB DE JP; do
  # the old term's last finished chart time for this region
  A=$($B chart --json $reg --db $W/oldrepl.db --limit 1000)
  AT=$(echo "$A" | jq -r 'map(.fetched_at)|max')
  Bc=$($B chart --json $reg --db $W/$S.db --limit 1000 --at $AT)
  FA=$(echo "$A" | jq -r '.[0].fetched_at'); FB=$(echo "$Bc" | jq -r '.[0].fetched_at')
  if [ "$A" != "$Bc" ]; then echo "CHART $reg differs: old replicated latest $FA, new leader at $AT: $FB"; FAIL=1; else echo "chart $reg ok ($FA, $(echo "$A" | jq length) rows)"; fi
done
# PITR: two consecutive US fetches in the old term, T between them
read T1 T2 < <(echo "$R" | jq -r '[.[] | select(.region=="US" and .status=="ok")] | "\(.[2].finished_at) \(.[1].started_at)"')
T=$(python3 -c "import datetime as d,sys;f=lambda s:d.datetime.fromisoformat(s.replace('Z','+00:00'));a,b=f('$T1'),f('$T2');print((a+(b-a)/2).strftime('%Y-%m-%dT%H:%M:%S.%fZ'))")
echo "PITR between $T1 and $T2 at $T"
$B archive restore --at $T --out $W/pitr.db || FAIL=1
for reg in US GB DE JP; do
  P=$($B chart --json $reg --db $W/pitr.db --limit 1000); Q=$($B chart --json $reg --db $W/$S.db --limit 1000 --at $T)
  [ "$P" == "$Q" ] && echo "pitr chart $reg ok ($(echo "$P" | jq -r '.[0].fetched_at'))" || { echo "PITR CHART $reg differs: restored $(echo "$P" | jq -r '.[0].fetched_at') vs leader --at: $(echo "$Q" | jq -r '.[0].fetched_at')"; FAIL=1; }
done
echo "pitr newest run: $($B runs --json --db $W/pitr.db --limit 1 | jq -c '.[0]|[.id,.region,.started_at,.status]')"
# serve --follow on a third path
( exec $B serve --follow file://$W/replica --db $W/c.db --listen 127.0.0.1:0 --log-format json >> $W/c.log 2>&1 & echo $! > $W/c.pid )
waitfor 30 bash -c "grep -q 'http://127.0.0.1' $W/c.log" || { cat $W/c.log; exit 1; }
CW=$(grep -o 'http://127.0.0.1:[0-9]*' $W/c.log | head -1); LW=$(serve_addr $S)
echo "follow serve $CW leader serve $LW"
ok=0; for i in $(seq 100); do
  for reg in US GB DE JP; do
    x=$(curl -s $LW/api/v1/charts/$reg); y=$(curl -s $CW/api/v1/charts/$reg)
    [ "$x" == "$y" ] && ok=$((ok+1))
  done
  [ $ok -ge 8 ] && break; sleep 0.3
done
echo "follow matches: $ok"; [ $ok -ge 8 ] || FAIL=1
curl -s $CW/readyz; echo
echo FAIL=$FAIL
exit $FAIL
