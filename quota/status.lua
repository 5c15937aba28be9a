-- status.lua: prune and report every limit of a credential and its upstream marks.
--
-- KEYS[1]                   ytrend:{cred}:exhausted
-- KEYS[2 .. m+1]            ytrend:{cred}:exhausted:<call j>   (j = 1..m)
-- KEYS[m+2i], KEYS[m+2i+1]  ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                   m
-- ARGV[2i], ARGV[2i+1]      window_us_i, ttl_ms_i
-- Reply: {now_us, until_0, reason_0, ..., until_m, reason_m, used_1, count_1, oldest_us_1, ..., used_n, count_n, oldest_us_n}
--   until_j/reason_j: the credential's mark (j = 0) and call j's; 0 and "" when none is in force
--   oldest_us_i is 0 when limit i's log is empty

local m = tonumber(ARGV[1])
local now = usec()
local r = {now}
for j = 1, m + 1 do
  local v = redis.call('GET', KEYS[j])
  local untilus = mark_end(v)
  if untilus > now then
    table.insert(r, untilus)
    table.insert(r, string.match(v, '^%d+ (.*)$') or '')
  else
    table.insert(r, 0)
    table.insert(r, '')
  end
end
for i = 1, (#KEYS - m - 1) / 2 do
  local log, total = KEYS[m + 2 * i], KEYS[m + 2 * i + 1]
  local used = prune(log, total, redis.call('GET', total), now, tonumber(ARGV[2 * i]), ARGV[2 * i + 1])
  local oldest = 0
  local first = redis.call('ZRANGE', log, 0, 0, 'WITHSCORES')
  if #first > 0 then
    oldest = tonumber(first[2])
  end
  table.insert(r, used)
  table.insert(r, redis.call('ZCARD', log))
  table.insert(r, oldest)
end
return r
