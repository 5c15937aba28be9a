-- status.lua: prune and report every limit of a credential, its upstream
-- marks, its epoch and its leader lease.
--
-- KEYS[1]                   ytrend:{cred}:exhausted
-- KEYS[2 .. m+1]            ytrend:{cred}:exhausted:<call j>   (j = 1..m)
-- KEYS[m+2], KEYS[m+3]      ytrend:{cred}:epoch, ytrend:{cred}:epoch:info
-- KEYS[m+4]                 ytrend:{cred}:leader
-- KEYS[m+3+2i], KEYS[m+4+2i]  ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                   m
-- ARGV[2i], ARGV[2i+1]      units_i, window_us_i
-- Reply: {now_us, until_0, reason_0, ..., until_m, reason_m,
--         epoch, grace_until_us, created_us, rebuilt_us, restored, lease,
--         used_1, count_1, oldest_us_1, ..., used_n, count_n, oldest_us_n}
--   until_j/reason_j: the credential's mark (j = 0) and call j's; 0 and "" when none is in force
--   epoch is '' when the ledger has none yet; lease is "<token> <holder>" or ''
--   oldest_us_i is 0 when limit i's log is empty
-- Errors: YTREND_CONFLICT as in reserve.lua.

local m = tonumber(ARGV[1])
local now = usec()
local r = {now}
for j = 1, m + 1 do
  local v = call('GET', KEYS[j])
  local untilus = mark_end(v)
  if untilus > now then
    table.insert(r, untilus)
    table.insert(r, match(v, '^%d+ (.*)$') or '')
  else
    table.insert(r, 0)
    table.insert(r, '')
  end
end

local epoch, grace_until = parse_epoch(call('GET', KEYS[m + 2]))
local info = call('HMGET', KEYS[m + 3], 'created', 'rebuilt', 'restored')
table.insert(r, epoch or '')
table.insert(r, tonumber(grace_until) or 0)
table.insert(r, tonumber(info[1]) or 0)
table.insert(r, tonumber(info[2]) or 0)
table.insert(r, tonumber(info[3]) or 0)
table.insert(r, call('GET', KEYS[m + 4]) or '')

local base = m + 3
local limits = {}
for i = 1, (#KEYS - base - 1) / 2 do
  limits[i] = limit(KEYS[base + 2 * i], KEYS[base + 2 * i + 1], ARGV[2 * i], ARGV[2 * i + 1])
  read_total(i, limits[i], call('GET', limits[i].total))
end
for _, l in ipairs(limits) do
  -- Status certifies nothing: a lost log reads as what is left, and the
  -- next reservation or sync finds the loss.
  prune(l, now)
  if l.stale then
    put_total(l)
  end
  local oldest = 0
  local first = call('ZRANGEBYSCORE', l.log, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #first > 0 then
    oldest = tonumber(first[2])
  end
  table.insert(r, l.used)
  table.insert(r, call('ZCOUNT', l.log, '-inf', '(+inf'))
  table.insert(r, oldest)
end
return r
