-- replay.lua: add fail-open grants journaled while Redis was unreachable.
-- ZADD NX on the same "<id>|<cost>" member the grant would have had makes it
-- idempotent: a grant whose reply was lost, or an entry another process
-- replayed first, is not counted again.
--
-- KEYS[2i-1], KEYS[2i]    ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                 number of entries m
-- ARGV[2i], ARGV[2i+1]    window_us_i, ttl_ms_i
-- then per entry (2+n values): id, at_us (client clock), cost_1, ..., cost_n   (cost 0: not counted by limit i)
-- Reply: {added, now_us}: added is the number of entries that added at least one member

local n = #KEYS / 2
local m = tonumber(ARGV[1])
local now = usec()
local limits = {}
for i = 1, n do
  local l = {log = KEYS[2 * i - 1], total = KEYS[2 * i], window = tonumber(ARGV[2 * i]), ttl = ARGV[2 * i + 1]}
  prune(l.log, l.total, redis.call('GET', l.total), now, l.window, l.ttl)
  limits[i] = l
end

local added = 0
local base = 2 + 2 * n
for e = 0, m - 1 do
  local a = base + e * (2 + n)
  local id = ARGV[a]
  -- A client clock ahead of Redis must not make an entry outlive its window.
  local at = math.min(tonumber(ARGV[a + 1]), now)
  local any = false
  for i, l in ipairs(limits) do
    local cost = tonumber(ARGV[a + 1 + i])
    if cost > 0 and at > now - l.window then
      if redis.call('ZADD', l.log, 'NX', int(at), id .. '|' .. ARGV[a + 1 + i]) == 1 then
        redis.call('INCRBY', l.total, cost)
        redis.call('PEXPIRE', l.log, l.ttl)
        redis.call('PEXPIRE', l.total, l.ttl)
        any = true
      end
    end
  end
  if any then
    added = added + 1
  end
end
return {added, now}
