-- reserve.lua: one reservation against every limit of a credential. All
-- limits are checked first and only then recorded, so a refusal consumes
-- nothing anywhere.
--
-- KEYS[1]                 ytrend:{cred}:exhausted          upstream mark on the whole credential
-- KEYS[2]                 ytrend:{cred}:exhausted:<call>   upstream mark on this call alone
--                                                          (KEYS[1] again when there is no call)
-- KEYS[3], KEYS[4]        ytrend:{cred}:epoch, ytrend:{cred}:epoch:info
-- KEYS[5]                 ytrend:{cred}:leader             the leader lease (lease.lua)
-- KEYS[2i+4], KEYS[2i+5]  ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                 reservation id
-- ARGV[2]                 the epoch the caller last saw ('' for none)
-- ARGV[3]                 a fresh epoch id, used if the ledger has none
-- ARGV[4]                 grace_us: how long a detected loss admits nothing
-- ARGV[5]                 fence: "<token> <holder>" of the leader lease the caller acts for, '' for none
-- ARGV[6]                 '1' when the id was chosen by the caller: a reuse with another cost is refused
-- ARGV[7]                 seen: the highest seq the caller saw in the epoch of ARGV[2] (0 for none)
-- ARGV[4i+4 .. 4i+7]      units_i, window_us_i, ttl_ms_i (ignored: budget keys never expire), cost_i
--                         (cost 0: limit i does not count this call; it is only pruned and reported)
-- Reply: {code, refused_by, retry_after_us, now_us, duplicate, epoch, grace_until_us, seq, lost,
--         used_1, ..., used_n}
--   code         1 granted; 0 refused; 2 the epoch is not the caller's: replay, then ask again
--                (nothing was decided, used_i are 0)
--   refused_by   0 when granted, i for limit i, -1 for an upstream mark, -2 for the grace period
--                after a rebuild (the later of what applies)
--   retry_after  exact wait until this same reservation would fit (0 when granted)
--   duplicate    the first grant's time (µs) when id had already been granted: nothing was
--                charged now; 0 otherwise
--   seq          the epoch's write count after the decision
--   lost         1 when this call found the books lost and started the epoch it names
--   used_i       units in limit i's window after the decision
-- Errors (nothing recorded): YTREND_FENCED <lease> when the fence is not the
-- current lease; YTREND_CONFLICT <limit> <units> <window> <units'> <window'>
-- when a stored definition differs; YTREND_REUSED <limit> <cost> when the id
-- holds another cost.

local id = ARGV[1]
local n = (#KEYS - 5) / 2
local now = usec()

-- One MGET reads the marks, the epoch, the lease and every total: each
-- redis.call costs about as much as the work it does, so the hot path keeps
-- their number down.
local mget = {KEYS[1], KEYS[2], KEYS[3], KEYS[5]}
for i = 1, n do
  mget[i + 4] = KEYS[2 * i + 5]
end
local state = redis.call('MGET', unpack(mget))

if ARGV[5] ~= '' and state[4] ~= ARGV[5] then
  error({err = 'YTREND_FENCED ' .. (state[4] or 'none')})
end

local limits, used, stale = {}, {}, {}
for i = 1, n do
  local a = 4 * i + 4
  local l = limit(KEYS[2 * i + 4], KEYS[2 * i + 5], ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]),
    id .. '|' .. ARGV[a + 3])
  check_def(i, l, state[i + 4])
  limits[i] = l
end

-- A caller's own id is rarely reused, and then it must mean the same cost:
-- a second cost would be a second charge. Random ids skip the scan.
if ARGV[6] == '1' then
  for i, l in ipairs(limits) do
    if l.cost > 0 then
      local cursor = '0'
      repeat
        local page = redis.call('ZSCAN', l.log, cursor, 'MATCH', id .. '|*', 'COUNT', 1000)
        cursor = page[1]
        for j = 1, #page[2], 2 do
          if page[2][j] ~= l.member then
            error({err = 'YTREND_REUSED ' .. i .. ' ' .. int(member_cost(page[2][j]))})
          end
        end
      until cursor == '0'
    end
  end
end

for i, l in ipairs(limits) do
  used[i], stale[i] = prune(l, state[i + 4], now)
end

local run = server_id()
local epoch, grace_until, seq, replay, lost = epoch_check(KEYS[3], KEYS[4], state[3], ARGV[2], tonumber(ARGV[7]),
  ARGV[3], tonumber(ARGV[4]), now, limits, run)
if lost then
  -- A total may have outlived its log: count what is really there.
  for i, l in ipairs(limits) do
    used[i], stale[i] = sum_log(l), true
  end
end
local lost_flag = lost and 1 or 0
if replay then
  local r = {2, 0, 0, now, 0, epoch, grace_until, seq, lost_flag}
  for i, l in ipairs(limits) do
    if stale[i] then
      put_total(l, used[i])
    end
    r[9 + i] = 0
  end
  return r
end

-- reply writes the totals pruning left stale, then builds the reply.
local function reply(granted, refused_by, wait, duplicate)
  for i, l in ipairs(limits) do
    if stale[i] then
      put_total(l, used[i])
    end
  end
  local r = {granted, refused_by, wait, now, duplicate, epoch, grace_until, seq, lost_flag}
  for i = 1, n do
    r[9 + i] = used[i]
  end
  return r
end

-- granted_before returns the time id was granted at, if it was (a retry
-- whose reply was lost), else false. Its entry is then still in the logs
-- that count it; a refused id left no trace and is simply decided again.
local function granted_before()
  for _, l in ipairs(limits) do
    if l.cost > 0 then
      local at = redis.call('ZSCORE', l.log, l.member)
      if at then
        return tonumber(at)
      end
    end
  end
  return false
end

local untilus = math.max(mark_end(state[1]), mark_end(state[2]))
if untilus > now or grace_until > now then
  local at = granted_before()
  if at then
    return reply(1, 0, 0, at)
  end
  if grace_until > untilus then
    return reply(0, -2, grace_until - now, 0)
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
  local at = granted_before()
  if at then
    return reply(1, 0, 0, at)
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
      return reply(1, 0, 0, tonumber(redis.call('ZSCORE', l.log, l.member)))
    end
    added[#added + 1] = i
  end
end
for _, i in ipairs(added) do
  local l = limits[i]
  used[i] = used[i] + l.cost -- prune made it exact
  put_total(l, used[i])
  stale[i] = false
end
-- One more write in this epoch: a reply carrying seq lets the caller tell
-- later whether the ledger still holds it.
seq = seq + 1
put_epoch(KEYS[3], epoch, grace_until, seq, run)
return reply(1, 0, 0, 0)
