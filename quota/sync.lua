-- sync.lua: check the ledger's epoch and replay grants this process holds
-- into it: fail-open grants journaled while Redis was unreachable, its whole
-- record of grants after the books were lost, or the audit that re-adds
-- whatever a failover dropped. ZADD NX on the member the grant had
-- ("<id>|<cost>") makes it idempotent: nothing is ever counted twice.
--
-- KEYS[1], KEYS[2]         ytrend:{cred}:epoch, ytrend:{cred}:epoch:info
-- KEYS[2i+1], KEYS[2i+2]   ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                  the epoch the caller last saw ('' for none)
-- ARGV[2]                  a fresh epoch id, used if the ledger has none
-- ARGV[3]                  grace_us (see reserve.lua)
-- ARGV[4]                  number of entries m
-- ARGV[5]                  '1' when the caller is restoring after a loss it met: the entries it
--                          adds count as restored even though the epoch is now the one it saw
-- ARGV[3i+3 .. 3i+5]       units_i, window_us_i, ttl_ms_i
-- then per entry (2+n values): id, at_us, cost_1, ..., cost_n   (cost 0: not counted by limit i)
-- Reply: {added, now_us, epoch, grace_until_us, restored}
--   added     entries that added at least one member
--   restored  1 when the epoch was not the caller's: this replay restored lost books

local n = (#KEYS - 2) / 2
local m = tonumber(ARGV[4])
local now = usec()

local mget = {KEYS[1]}
for i = 1, n do
  mget[i + 1] = KEYS[2 * i + 2]
end
local state = redis.call('MGET', unpack(mget))

local limits = {}
for i = 1, n do
  local a = 3 * i + 3
  local l = limit(KEYS[2 * i + 1], KEYS[2 * i + 2], ARGV[a], ARGV[a + 1], ARGV[a + 2])
  check_def(i, l, state[i + 1])
  limits[i] = l
end

local used, dirty = {}, {}
local lost = false
for i, l in ipairs(limits) do
  local orphan
  used[i], dirty[i], orphan = prune(l, state[i + 1], now)
  if orphan then
    -- Rebuilt from what the processes replay, starting with these entries.
    dirty[i], lost = true, true
  end
end

local epoch, grace_until, restored = epoch_check(KEYS[1], KEYS[2], state[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), now, lost)

local added = 0
local base = 6 + 3 * n
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
        used[i], dirty[i] = used[i] + cost, true
        any = true
      end
    end
  end
  if any then
    added = added + 1
  end
end

for i, l in ipairs(limits) do
  if dirty[i] then
    put_total(l, used[i])
  end
end
if (restored or ARGV[5] == '1') and added > 0 then
  redis.call('HINCRBY', KEYS[2], 'restored', added)
end
return {added, now, epoch, grace_until, restored and 1 or 0}
