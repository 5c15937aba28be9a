-- mark.lua: upstream said quotaExceeded; refuse reservations until the given
-- instant, on the whole credential or on some calls only. A mark already in
-- force that lasts longer is kept.
--
-- KEYS[1..m]   the marks to set: ytrend:{cred}:exhausted (whole credential)
--              or ytrend:{cred}:exhausted:<call>; each value "<until_us> <reason>",
--              expiring at until
-- ARGV[1]      until_us
-- ARGV[2]      reason
-- Reply: {set, now_us}
--   set is the number of marks written (a longer one kept counts as 0),
--   or -1 when until_us is not after now: nothing was written

local now = usec()
local untilus = tonumber(ARGV[1])
if untilus <= now then
  return {-1, now}
end
local set = 0
for _, key in ipairs(KEYS) do
  if mark_until(key) < untilus then
    call('SET', key, ARGV[1] .. ' ' .. ARGV[2], 'PXAT', int(math.ceil(untilus / 1000)))
    set = set + 1
  end
end
return {set, now}
