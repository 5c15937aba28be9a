-- release.lua: remove a reservation whose call never left the process.
--
-- KEYS[2i-1], KEYS[2i]    ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                 reservation id (only [A-Za-z0-9_.:-], so it is a literal MATCH pattern)
-- ARGV[2i], ARGV[2i+1]    units_i, window_us_i
-- Reply: the number of entries removed (0: unknown id, or already outside every window)
-- Errors: YTREND_CONFLICT as in reserve.lua.

local pattern = ARGV[1] .. '|*'
local now = usec()
local n = #KEYS / 2
local limits = {}
for i = 1, n do
  limits[i] = limit(KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i], ARGV[2 * i + 1])
  read_total(i, limits[i], call('GET', KEYS[2 * i]))
end
local removed = 0
for _, l in ipairs(limits) do
  prune(l, now)
  -- Release is rare; a scan of one credential's log is cheap enough.
  -- Removing members only raises the oldest: the bound still holds.
  local cursor = '0'
  repeat
    local page = call('ZSCAN', l.log, cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = page[1]
    for j = 1, #page[2], 2 do
      local m = page[2][j]
      if call('ZREM', l.log, m) == 1 then
        l.used = l.used - member_cost(m)
        removed = removed + 1
      end
    end
  until cursor == '0'
  put_total(l)
end
return removed
