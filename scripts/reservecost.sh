#!/bin/bash
# reservecost.sh: the server cost of one reserve.lua call (the shipped
# videos.list reservation) beside one of redis_rate's, on a private
# redis-server, in alternating rounds. Used for BENCHMARKS.md (issue 21).
#
#   scripts/reservecost.sh [-n calls] [-r rounds] [-g] checkout...
#
# Each checkout is a directory holding quota/window.lua and quota/reserve.lua
# (this tree, or `git worktree add /tmp/before <commit>`). Every round runs
# redis_rate, then each checkout, N calls each with redis-benchmark over a
# unix socket, on a daily log that grows from 10,000 entries; it prints
# Redis' own server time per call (INFO commandstats, usec_per_call of
# EVALSHA). With -g the server runs under valgrind's callgrind and the
# script prints instructions per call instead: the same on a quiet or a
# loaded machine, so two runs compare without noise.
set -euo pipefail
N=20000 ROUNDS=3 GRIND=
while getopts n:r:g o; do
  case $o in
    n) N=$OPTARG ;; r) ROUNDS=$OPTARG ;; g) GRIND=1 ;; *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-n calls] [-r rounds] [-g] checkout..." >&2; exit 2; }

dir=$(mktemp -d)
sock=$dir/redis.sock
cleanup() {
  [ -f "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
if [ -n "$GRIND" ]; then
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" redis-server --port 0 --unixsocket "$sock" \
    --save '' --appendonly no >"$dir/log" 2>&1 &
else
  redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no >"$dir/log" 2>&1 &
fi
echo $! >"$dir/pid"
R="redis-cli -s $sock"
for _ in $(seq 100); do $R ping >/dev/null 2>&1 && break; sleep 0.2; done

# redis_rate's script, as the module cache holds it.
rate=$(go env GOMODCACHE)/github.com/go-redis/redis_rate/v10@v10.0.1/lua.go
awk '/^var allowN = redis.NewScript\(`/{on=1; next} on && /^`\)/{exit} on' "$rate" >"$dir/rate.lua"

# cost runs N calls of one script and prints its cost per call.
cost() {
  if [ -n "$GRIND" ]; then
    callgrind_control -z "$(cat "$dir/pid")" >/dev/null 2>&1
  fi
  $R config resetstat >/dev/null
  redis-benchmark -s "$sock" -n "$N" -r 100000000000 -c 1 "$@" >/dev/null
  if [ -n "$GRIND" ]; then
    rm -f "$dir"/cg.out.*
    callgrind_control -d "$(cat "$dir/pid")" >/dev/null 2>&1
    # Instructions inside EVALSHA, per call: what commandstats times.
    callgrind_annotate --inclusive=yes "$dir"/cg.out.* 2>/dev/null |
      awk -v n="$N" '/evalShaCommand/ {gsub(",", "", $1); printf "%d Ir", $1 / n; exit}'
  else
    $R info commandstats | sed -n 's/^cmdstat_evalsha:.*usec_per_call=\([0-9.]*\).*/\1 µs/p' | tr -d '\n'
  fi
}

ratesha=$($R script load "$(cat "$dir/rate.lua")")
declare -A sha
i=0
for co in "$@"; do
  sha[$i]=$($R script load "$(cat "$co/quota/window.lua" "$co/quota/reserve.lua")")
  i=$((i + 1))
done
lim="1125899906842624 86400000000 86401000 1 1125899906842624 3600000000 3601000 0"
for r in $(seq "$ROUNDS"); do
  printf 'round %d  redis_rate %s' "$r" "$(cost evalsha "$ratesha" 1 "rate{$r}" 1073741824 1073741824 1 1)"
  i=0
  for co in "$@"; do
    K="ytrend:{c$r-$i}"
    keys="$K:exhausted $K:exhausted:videos.list $K:epoch $K:epoch:info $K:leader $K:log:daily $K:total:daily $K:log:search $K:total:search"
    # The first call starts the epoch; then 10,000 grants fill the day.
    $R evalsha "${sha[$i]}" 9 $keys first "" e0 1 "" 0 0 $lim >/dev/null
    redis-benchmark -s "$sock" -n 10000 -r 100000000000 -c 1 evalsha "${sha[$i]}" 9 $keys fill__rand_int__ e0 e0 1 "" 0 0 $lim >/dev/null
    printf '  %s %s' "$co" "$(cost evalsha "${sha[$i]}" 9 $keys id__rand_int__ e0 e0 1 "" 0 0 $lim)"
    i=$((i + 1))
  done
  echo
done
