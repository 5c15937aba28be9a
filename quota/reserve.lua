-- reserve.lua: one reservation against every limit of a credential. All
-- limits are checked first and only then recorded, so a refusal consumes
-- nothing anywhere.
--
-- KEYS[1]                 ytrend:{cred}:exhausted          upstream mark on the whole credential
-- KEYS[2]                 ytrend:{cred}:exhausted:<call>   upstream mark on this call alone
--                                                          (KEYS[1] again when there is no call)
-- KEYS[2i+1], KEYS[2i+2]  ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                 reservation id
-- ARGV[4i-2 .. 4i+1]      units_i, window_us_i, ttl_ms_i, cost_i
--                         (cost 0: limit i does not count this call; it is only pruned and reported)
-- Reply: {granted, refused_by, retry_after_us, now_us, duplicate, used_1, ..., used_n}
--   granted      1 or 0
--   refused_by   0 when granted, i for limit i, -1 for an upstream mark (the later of the two)
--   retry_after  exact wait until this same reservation would fit (0 when granted)
--   duplicate    1 when id had already been granted: nothing was charged now
--   used_i       units in limit i's window after the decision

local id = ARGV[1]
local n = (#KEYS - 2) / 2
local now = usec()

-- One MGET reads both marks and every total: each redis.call costs about as
-- much as the work it does, so the hot path keeps their number down.
local mget = {KEYS[1], KEYS[2]}
for i = 1, n do
  mget[i + 2] = KEYS[2 * i + 2]
end
local state = redis.call('MGET', unpack(mget))

-- Pruning defers writing the totals: a grant SETs them anyway.
local limits, used, stale = {}, {}, {}
for i = 1, n do
  local a = 4 * i - 2
  local l = {
    log = KEYS[2 * i + 1], total = KEYS[2 * i + 2],
    units = tonumber(ARGV[a]), window = tonumber(ARGV[a + 1]),
    ttl = ARGV[a + 2], cost = tonumber(ARGV[a + 3]),
    member = id .. '|' .. ARGV[a + 3],
  }
  limits[i] = l
  used[i], stale[i] = prune(l.log, l.total, state[i + 2], now, l.window, l.ttl, true)
end

-- reply writes the totals pruning left stale, then builds the reply.
local function reply(granted, refused_by, wait, duplicate)
  for i = 1, n do
    if stale[i] then
      redis.call('SET', limits[i].total, used[i], 'KEEPTTL')
    end
  end
  local r = {granted, refused_by, wait, now, duplicate}
  for i = 1, n do
    r[5 + i] = used[i]
  end
  return r
end

-- granted_before reports whether id was already granted (a retry whose
-- reply was lost). Its entry is then still in the logs that count it; a
-- refused id left no trace and is simply decided again.
local function granted_before()
  for _, l in ipairs(limits) do
    if l.cost > 0 and redis.call('ZSCORE', l.log, l.member) then
      return true
    end
  end
  return false
end

local untilus = math.max(mark_end(state[1]), mark_end(state[2]))
if untilus > now then
  if granted_before() then
    return reply(1, 0, 0, 1)
  end
  return reply(0, -1, untilus - now, 0)
end

-- wait_for walks the oldest entries until enough units have left for cost to
-- fit: the oldest entry alone under-states the wait whenever cost > 1.
local function wait_for(l, in_use)
  local need = in_use + l.cost - l.units
  local freed, start, batch = 0, 0, 128
  while true do
    local page = redis.call('ZRANGE', l.log, start, start + batch - 1, 'WITHSCORES')
    if #page == 0 then
      return l.window -- unreachable while the total is exact
    end
    for j = 1, #page, 2 do
      freed = freed + member_cost(page[j])
      if freed >= need then
        return tonumber(page[j + 1]) + l.window - now
      end
    end
    start = start + batch
  end
end

-- Check every limit first...
local refused_by, wait = 0, -1
for i, l in ipairs(limits) do
  if l.cost > 0 and used[i] + l.cost > l.units then
    local w = wait_for(l, used[i])
    if w > wait then
      refused_by, wait = i, w
    end
  end
end
if refused_by > 0 then
  -- A retry of a grant can find the limit full of its own entry.
  if granted_before() then
    return reply(1, 0, 0, 1)
  end
  return reply(0, refused_by, wait, 0)
end

-- ...then record in all of them. ZADD NX doubles as the duplicate check on
-- this, the common path: an existing member means id was granted before, and
-- whatever this call added is taken back.
local score = int(now)
local added = {}
for i, l in ipairs(limits) do
  if l.cost > 0 then
    if redis.call('ZADD', l.log, 'NX', score, l.member) == 0 then
      for _, j in ipairs(added) do
        redis.call('ZREM', limits[j].log, limits[j].member)
      end
      return reply(1, 0, 0, 1)
    end
    added[#added + 1] = i
  end
end
for _, i in ipairs(added) do
  local l = limits[i]
  redis.call('PEXPIRE', l.log, l.ttl)
  used[i] = used[i] + l.cost -- prune made it exact
  redis.call('SET', l.total, used[i], 'PX', l.ttl)
  stale[i] = false
end
return reply(1, 0, 0, 0)
