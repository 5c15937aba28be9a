-- release.lua: remove a reservation whose call never left the process.
--
-- KEYS[2i-1], KEYS[2i]    ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                 reservation id (only [A-Za-z0-9_.:-], so it is a literal MATCH pattern)
-- ARGV[2i], ARGV[2i+1]    window_us_i, ttl_ms_i
-- Reply: the number of entries removed (0: unknown id, or already outside every window)

local pattern = ARGV[1] .. '|*'
local now = usec()
local removed = 0
for i = 1, #KEYS / 2 do
  local log, total = KEYS[2 * i - 1], KEYS[2 * i]
  prune(log, total, redis.call('GET', total), now, tonumber(ARGV[2 * i]), ARGV[2 * i + 1])
  -- Release is rare; a scan of one credential's log is cheap enough.
  local cursor = '0'
  repeat
    local page = redis.call('ZSCAN', log, cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = page[1]
    for j = 1, #page[2], 2 do
      local m = page[2][j]
      if redis.call('ZREM', log, m) == 1 then
        redis.call('DECRBY', total, member_cost(m))
        removed = removed + 1
      end
    end
  until cursor == '0'
end
return removed
