#!/bin/bash
# reservecost.sh: the server cost of one reserve.lua call (the shipped
# videos.list reservation) beside one of redis_rate's, on a private
# redis-server, in alternating rounds. Used for BENCHMARKS.md (issue 21).
# A checkout whose quota/redis.go loads a function library is measured with
# FCALL (reserve.lua as the library's function, window.lua its shared code);
# an older one with EVALSHA (window.lua prepended to reserve.lua).
#
#   scripts/reservecost.sh [-n calls] [-r rounds] [-g [-k dir]] checkout...
#
# Each checkout is a directory holding quota/window.lua and quota/reserve.lua
# (this tree, or `git worktree add /tmp/before <commit>`). Every round runs
# redis_rate, then each checkout, N calls each with redis-benchmark over a
# unix socket, on a daily log that grows from 10,000 entries; it prints
# Redis' own server time per call (INFO commandstats, usec_per_call of
# EVALSHA or FCALL). With -g the server runs under valgrind's callgrind and
# the script prints instructions per call inside that command instead: the
# same on a quiet or a loaded machine, so two runs compare without noise.
# -k keeps each measurement's callgrind profile in dir (for callgrind_annotate
# --tree=caller: where the instructions go), named <round>.<checkout index>,
# redis_rate's as <round>.rate.
set -euo pipefail
N=20000 ROUNDS=3 GRIND= KEEP=
while getopts n:r:gk: o; do
  case $o in
    n) N=$OPTARG ;; r) ROUNDS=$OPTARG ;; g) GRIND=1 ;; k) KEEP=$OPTARG ;; *) exit 2 ;;
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

# cost runs N calls of one script and prints its cost per call: $1 names the
# measurement, $2 is the command (evalsha or fcall), the rest are
# redis-benchmark's arguments.
cost() {
  local label=$1 cmd=$2
  shift
  if [ -n "$GRIND" ]; then
    callgrind_control -z "$(cat "$dir/pid")" >/dev/null 2>&1
  fi
  $R config resetstat >/dev/null
  redis-benchmark -s "$sock" -n "$N" -r 100000000000 -c 1 "$@" >/dev/null
  if [ -n "$GRIND" ]; then
    rm -f "$dir"/cg.out.*
    callgrind_control -d "$(cat "$dir/pid")" >/dev/null 2>&1
    [ -z "$KEEP" ] || cat "$dir"/cg.out.* >"$KEEP/$label"
    # Instructions inside the command, per call: what commandstats times.
    local fn=evalShaCommand
    [ "$cmd" = fcall ] && fn=fcallCommand
    callgrind_annotate --inclusive=yes "$dir"/cg.out.* 2>/dev/null |
      awk -v n="$N" -v fn="$fn" '$0 ~ ":" fn " " {gsub(",", "", $1); printf "%d Ir", $1 / n; exit}'
  else
    $R info commandstats | sed -n "s/^cmdstat_$cmd:.*usec_per_call=\([0-9.]*\).*/\1 µs/p" | tr -d '\n'
  fi
}

ratesha=$($R script load "$(cat "$dir/rate.lua")")
# call[i] is how checkout i is called: "evalsha <sha>" or "fcall <function>".
declare -A call
i=0
for co in "$@"; do
  if grep -q register_function "$co/quota/redis.go"; then
    # The library as quota/redis.go builds it, with reserve.lua alone.
    $R function load replace "$(printf '#!lua name=bench%d\n%s\n' "$i" "$(cat "$co/quota/window.lua")"
      printf "redis.register_function{function_name = 'bench%d_reserve', callback = function(KEYS, ARGV)\n%s\n%s\nend}\n" \
        "$i" "$(grep -q '^local function bind' "$co/quota/window.lua" && echo 'if not call then bind() end')" \
        "$(cat "$co/quota/reserve.lua")")" >/dev/null
    call[$i]="fcall bench${i}_reserve"
  else
    call[$i]="evalsha $($R script load "$(cat "$co/quota/window.lua" "$co/quota/reserve.lua")")"
  fi
  i=$((i + 1))
done
# What follows the id, the epoch and the fresh epoch: the grace, fence, caller
# id flag, seen, then each limit's units, window_us and cost (before, also
# ttl_ms after the window, in a reserve.lua that still lists it); or, in a
# reserve.lua that takes them as one spec, the fence, flag and seen, then
# "<grace> <units> <window_us> <cost> ..." as one argument.
declare -A lim spec
i=0
for co in "$@"; do
  lim[$i]="1125899906842624 86400000000 1 1125899906842624 3600000000 0"
  if grep -q ttl_ms_i "$co/quota/reserve.lua"; then
    lim[$i]="1125899906842624 86400000000 86401000 1 1125899906842624 3600000000 3601000 0"
  fi
  spec[$i]=
  if grep -q 'ARGV\[7\] *"<grace_us>' "$co/quota/reserve.lua"; then
    spec[$i]="1 ${lim[$i]}"
  fi
  i=$((i + 1))
done
for r in $(seq "$ROUNDS"); do
  printf 'round %d  redis_rate %s' "$r" "$(cost "$r.rate" evalsha "$ratesha" 1 "rate{$r}" 1073741824 1073741824 1 1)"
  i=0
  for co in "$@"; do
    K="ytrend:{c$r-$i}"
    # The keys in the order the checkout's reserve.lua takes them: the
    # library's puts the ones its MGET reads first.
    keys="$K:exhausted $K:exhausted:videos.list $K:epoch $K:epoch:info $K:leader $K:log:daily $K:total:daily $K:log:search $K:total:search"
    if [ "${call[$i]%% *}" = fcall ]; then
      keys="$K:exhausted $K:exhausted:videos.list $K:epoch $K:leader $K:total:daily $K:total:search $K:epoch:info $K:log:daily $K:log:search"
    fi
    if [ -n "${spec[$i]}" ]; then
      rest=("" 0 0 "${spec[$i]}")
    else
      # shellcheck disable=SC2206 # the limits are separate arguments
      rest=(1 "" 0 0 ${lim[$i]})
    fi
    # The first call starts the epoch; then 10,000 grants fill the day.
    $R ${call[$i]} 9 $keys first "" e0 "${rest[@]}" >/dev/null
    redis-benchmark -s "$sock" -n 10000 -r 100000000000 -c 1 ${call[$i]} 9 $keys fill__rand_int__ e0 e0 "${rest[@]}" >/dev/null
    printf '  %s %s' "$co" "$(cost "$r.$i" ${call[$i]} 9 $keys id__rand_int__ e0 e0 "${rest[@]}")"
    i=$((i + 1))
  done
  echo
done
