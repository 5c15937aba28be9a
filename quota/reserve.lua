-- reserve.lua: one reservation against every limit of a credential. All
-- limits are checked first and only then recorded, so a refusal consumes
-- nothing anywhere.
--
-- KEYS[1]                 ytrend:{cred}:exhausted          upstream mark on the whole credential
-- KEYS[2]                 ytrend:{cred}:exhausted:<call>   upstream mark on this call alone
--                                                          (KEYS[1] again when there is no call)
-- KEYS[3]                 ytrend:{cred}:epoch
-- KEYS[4]                 ytrend:{cred}:leader             the leader lease (lease.lua)
-- KEYS[4+i]               ytrend:{cred}:total:<limit i>    (i = 1..n)
-- KEYS[5+n]               ytrend:{cred}:epoch:info
-- KEYS[5+n+i]             ytrend:{cred}:log:<limit i>
--                         (the keys one MGET reads come first: KEYS[1 .. 4+n])
-- ARGV[1]                 reservation id
-- ARGV[2]                 the epoch the caller last saw ('' for none)
-- ARGV[3]                 a fresh epoch id, used if the ledger has none
-- ARGV[4]                 fence: "<token> <holder>" of the leader lease the caller acts for, '' for none
-- ARGV[5]                 '1' when the id was chosen by the caller: a reuse with another cost is refused
-- ARGV[6]                 seen: the highest seq the caller saw in the epoch of ARGV[2] (0 for none)
-- ARGV[7]                 "<grace_us> <units_1> <window_us_1> <cost_1> ... <units_n> <window_us_n> <cost_n>":
--                         grace_us is how long a detected loss admits nothing; cost_i 0: limit i does
--                         not count this call, it is only pruned and reported. The same few specs come
--                         call after call, and each is read once per library load (spec in window.lua).
-- Reply: "<now_us> <epoch> <seq> <used_1> ... <used_n>", one string, for a plain grant (code 1,
--         duplicate 0, not lost; its grace is over), else
--        {code, refused_by, retry_after_us, now_us, duplicate, epoch, grace_until_us, seq, lost,
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
local sp = spec(ARGV[7])
if sp.n ~= n then
  error('reserve: ' .. n .. ' limits in KEYS, ' .. sp.n .. ' in ARGV[7]')
end
local now, now_s = usec_s()

-- One MGET reads the marks, the epoch, the lease and every total: each
-- redis.call costs about as much as the work it does, so the hot path keeps
-- their number down.
local state = call('MGET', unpack(KEYS, 1, 4 + n))

if ARGV[4] ~= '' and state[4] ~= ARGV[4] then
  error({err = 'YTREND_FENCED ' .. (state[4] or 'none')})
end

-- The spec's records, reused call after call: every per-call field is set
-- here, before anything reads it.
for i = 1, n do
  local l = sp[i]
  l.log, l.total = KEYS[5 + n + i], KEYS[4 + i]
  if l.cost > 0 then
    l.member = id .. '|' .. l.cost_s
  end
  local v = state[4 + i]
  if v and v == l.last_v then
    -- read_total's common case, inline: the total this record last wrote.
    l.used, l.used_s, l.oldest, l.oldest_s = l.last_used, l.last_used_s, l.last_oldest, l.last_oldest_s
  else
    read_total(i, l, v)
  end
end
local limits = sp

-- A caller's own id is rarely reused, and then it must mean the same cost:
-- a second cost would be a second charge. Random ids skip the scan.
if ARGV[5] == '1' then
  for i = 1, n do
    local l = limits[i]
    if l.cost > 0 then
      local cursor = '0'
      repeat
        local page = call('ZSCAN', l.log, cursor, 'MATCH', id .. '|*', 'COUNT', 1000)
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

for i = 1, n do
  local l = limits[i]
  local used = l.used
  if used and used >= 0 and l.oldest and (used == 0 or l.oldest > now - l.window) then
    l.stale = false -- prune's common case, inline: nothing can have expired
  else
    prune(l, now)
  end
end

local run = server_id()
-- ARGV[6] + 0, not tonumber: tonumber converts a string twice (it checks,
-- then converts), and seen is a new number call after call.
local epoch, grace_until, seq, replay, lost, head = epoch_check(KEYS[3], KEYS[5 + n], state[3], ARGV[2],
  ARGV[6] + 0, ARGV[3], sp.grace, now, limits, run, true)
if lost then
  -- A total may have outlived its log: count what is really there.
  for i = 1, n do
    recount(limits[i])
  end
end

-- The decision, in straight code: a closure per call (and one upvalue per
-- local it reads) costs more than the branches it would save.
-- code, refused_by, wait, duplicate are the reply's first fields.
local code, refused_by, wait, duplicate = 1, 0, 0, 0
-- (No mark, the common case, is no call.)
local untilus, call_until = state[1] and mark_end(state[1]) or 0, state[2] and mark_end(state[2]) or 0
if call_until > untilus then
  untilus = call_until
end
if replay then
  code = 2
elseif untilus > now or grace_until > now then
  local at = granted_before(limits)
  if at then
    duplicate = at
  elseif grace_until > untilus then
    code, refused_by, wait = 0, -2, grace_until - now
  else
    code, refused_by, wait = 0, -1, untilus - now
  end
else
  -- Check every limit first...
  wait = -1
  for i = 1, n do
    local l = limits[i]
    if l.cost > 0 and l.used + l.cost > l.units then
      local w = wait_for(l, l.used, now)
      if w > wait then
        refused_by, wait = i, w
      end
    end
  end
  if refused_by > 0 then
    -- A retry of a grant can find the limit full of its own entry.
    local at = granted_before(limits)
    if at then
      refused_by, wait, duplicate = 0, 0, at
    else
      code = 0
    end
  else
    wait = 0
    -- ...then record in all of them. ZADD NX doubles as the duplicate check
    -- on this, the common path: an existing member means id was granted
    -- before, and whatever this call added is taken back.
    for i = 1, n do
      local l = limits[i]
      if l.cost > 0 and call('ZADD', l.log, 'NX', now_s, l.member) == 0 then
        for j = 1, i - 1 do
          if limits[j].cost > 0 then
            call('ZREM', limits[j].log, limits[j].member)
          end
        end
        duplicate = tonumber(call('ZSCORE', l.log, l.member))
        break
      end
    end
    if duplicate == 0 then
      -- One more write in this epoch: a reply carrying seq lets the caller
      -- tell later whether the ledger still holds it. The totals and the
      -- epoch go in one MSET (which, like SET, clears a TTL).
      seq = seq + 1
      local k = 0
      for i = 1, n do
        local l = limits[i]
        if l.cost > 0 then
          entered(l, now, now_s)
          l.used = l.used + l.cost -- prune made it exact
        end
        if l.cost > 0 or l.stale then
          mset[k + 1], mset[k + 2] = l.total, total_value(l)
          k = k + 2
          l.stale = false
        end
      end
      mset[k + 1], mset[k + 2] = KEYS[3], epoch_value(epoch, grace_until, seq, run, head)
      call('MSET', unpack(mset, 1, k + 2))
    end
  end
end

-- The totals pruning left stale, then the reply: for a plain grant (nearly
-- every reply) one string of the strings the call already made, which
-- costs Redis a fifth of what an array does (it converts each element of
-- an array, ~1,400 instructions); else the whole array. A grant is never in
-- the grace (it would have been refused), so its grace_until tells the
-- caller nothing.
if code == 1 and duplicate == 0 then
  local r = reply
  r[1], r[2], r[3] = now_s, epoch, last_seq_s
  for i = 1, n do
    local l = limits[i]
    if l.stale then
      put_total(l)
    end
    r[3 + i] = l.used_s or int(l.used)
  end
  return concat(r, ' ', 1, 3 + n)
end
local r = reply
r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9] = code, refused_by, wait, now, duplicate, epoch, grace_until,
  seq, lost and 1 or 0
for i = 1, n do
  local l = limits[i]
  if l.stale then
    put_total(l)
  end
  r[9 + i] = code == 2 and 0 or l.used
end
r[10 + n] = nil
return r
