#!/bin/bash
# fcallcost.sh: what the parts of a Redis function cost, in instructions per
# FCALL counted by valgrind's callgrind on a private redis-server: the call
# itself, its keys and arguments, one command, a reply, Lua's own work. The
# unit prices behind BENCHMARKS.md's table of where reserve.lua's
# instructions go (issue 21).
#
#   scripts/fcallcost.sh [-n calls]
set -euo pipefail
N=1000
while getopts n: o; do
  case $o in
    n) N=$OPTARG ;; *) exit 2 ;;
  esac
done

dir=$(mktemp -d)
sock=$dir/redis.sock
cleanup() {
  [ -f "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" redis-server --port 0 --unixsocket "$sock" \
  --save '' --appendonly no >"$dir/log" 2>&1 &
echo $! >"$dir/pid"
R="redis-cli -s $sock"
for _ in $(seq 100); do $R ping >/dev/null 2>&1 && break; sleep 0.2; done

$R function load "#!lua name=probe
redis.register_function('empty', function(KEYS, ARGV) return 0 end)
redis.register_function('time', function(KEYS, ARGV) redis.call('TIME') return 0 end)
redis.register_function('get5', function(KEYS, ARGV) for i = 1, 5 do redis.call('GET', KEYS[1]) end return 0 end)
redis.register_function('zscore5', function(KEYS, ARGV) for i = 1, 5 do redis.call('ZSCORE', KEYS[1], 'a') end return 0 end)
redis.register_function('zrank5', function(KEYS, ARGV) for i = 1, 5 do redis.call('ZRANK', KEYS[1], 'a') end return 0 end)
redis.register_function('reply10', function(KEYS, ARGV) return {1, 2, 3, 4, 5, 6, 7, 8, 9, 10} end)
redis.register_function('format5', function(KEYS, ARGV)
  for i = 1, 5 do string.format('%d', 1732600000000000 + i) end
  return 0
end)
redis.register_function('table5', function(KEYS, ARGV)
  for i = 1, 5 do local t = {a = i, b = i, c = i, d = i, e = i, f = i, g = i, h = i} end
  return 0
end)
redis.register_function('tonumber5', function(KEYS, ARGV)
  for i = 1, 5 do tonumber(ARGV[1]) end
  return 0
end)
redis.register_function('reply11', function(KEYS, ARGV)
  return {1, 0, 0, 1732600000000000, 0, 'abcdefghijk', 1732600000000000, 12345, 0, 10000, 0}
end)
redis.register_function('string11', function(KEYS, ARGV)
  return string.format('%d %d %d %d %d %s %d %d %d %d %d', 1, 0, 0, 1732600000000000, 0, 'abcdefghijk',
    1732600000000000, 12345, 0, 10000, 0)
end)
redis.register_function('append6', function(KEYS, ARGV)
  local w = {}
  for i = 1, 6 do w[#w + 1] = 'a' end
  return 0
end)
redis.register_function('constructor6', function(KEYS, ARGV) local w = {'a', 'a', 'a', 'a', 'a', 'a'} return 0 end)
redis.register_function('mget6', function(KEYS, ARGV) redis.call('MGET', unpack(KEYS)) return 0 end)" >/dev/null
$R set k "102 9500 86400000000" >/dev/null
$R set k2 "0 9500 3600000000 0" >/dev/null
$R set k3 "abcdefghijk 1732600000000000 12345 0123456789abcdef0123456789abcdef01234567" >/dev/null
$R zadd z 1 a 2 b >/dev/null

# cost prints instructions per call inside FCALL for redis-benchmark's args.
cost() {
  callgrind_control -z "$(cat "$dir/pid")" >/dev/null 2>&1
  redis-benchmark -s "$sock" -n "$N" -r 100000000000 -c 1 "$@" >/dev/null
  rm -f "$dir"/cg.out.*
  callgrind_control -d "$(cat "$dir/pid")" >/dev/null 2>&1
  callgrind_annotate --inclusive=yes "$dir"/cg.out.* 2>/dev/null |
    awk -v n="$N" '$0 ~ ":fcallCommand " {gsub(",", "", $1); printf "%d", $1 / n; exit}'
}

K='ytrend:{c}'
keys9="$K:exhausted $K:exhausted:videos.list $K:epoch $K:leader $K:total:daily $K:total:search $K:epoch:info $K:log:daily $K:log:search"
args13="id__rand_int__ e0 e0 1 '' 0 0 9500 86400000000 1 1000 3600000000 0"
while read -r label args; do
  # shellcheck disable=SC2086 # word splitting is the point
  printf '%-52s %8s\n' "$label" "$(eval cost fcall $args)"
done <<EOF
empty_function,no_keys_or_arguments empty 0
empty_function,reserve.lua's_9_keys_and_13_arguments empty 9 $keys9 $args13
TIME time 0
5x_GET_of_a_string get5 1 k
5x_ZSCORE zscore5 1 z
5x_ZRANK zrank5 1 z
a_reply_of_10_integers reply10 0
5x_string.format('%d',_µs) format5 0
5x_a_table_of_8_fields table5 0
5x_tonumber('86400000000') tonumber5 0 86400000000
a_reply_of_11_values reply11 0
the_same_11_as_one_string.format string11 0
6_appends_to_a_new_table append6 0
a_table_of_6_by_its_constructor constructor6 0
MGET_of_6_keys_(3_missing),_6_keys mget6 6 k k2 k3 z z2 z3
6_keys,_nothing_else empty 6 k k2 k3 z z2 z3
EOF
