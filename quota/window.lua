-- window.lua: the functions every quota script shares. It is the code of the
-- Redis Function library (see redis.go) above the scripts, each of which is
-- the body of one function: it runs once when the library is loaded, and its
-- locals live as long as the library does in this server process.
--
-- A limit of a credential is two keys:
--   ytrend:{cred}:log:<limit>    sorted set, one member per reservation:
--                                "<id>|<cost>" scored by its grant time in
--                                microseconds of Redis TIME, plus the epoch's
--                                certificate "~<epoch>|0" scored +inf
--   ytrend:{cred}:total:<limit>  string "<used> <units> <window_us>": the sum
--                                of the members' costs, and the limit's
--                                definition as the processes spending from it
--                                agreed (a plain "<used>" is from before
--                                definitions were stored, and is accepted)
-- An entry with score s counts while s > now - window.
--
-- The ledger's identity is two keys:
--   ytrend:{cred}:epoch          string "<epoch id> <grace_until_us> <seq>"
--   ytrend:{cred}:epoch:info     hash: created, rebuilt, restored
-- No budget key has a TTL, so a volatile-* eviction policy never picks one,
-- and each log carries its epoch's certificate, so no key can vanish (an
-- allkeys-* eviction, a DEL, a FLUSHALL, a restart) without the next script
-- that reads it noticing. seq counts the writes to the logs in this epoch;
-- every reply carries it, and a caller that saw a higher seq than the
-- ledger holds knows the ledger lost writes it had acknowledged (a failover
-- to a replica that missed them). Each of these is a loss of the books: a
-- new epoch starts, nothing is admitted for the grace period, and every
-- process replays its record (and its mirror of the log) before it spends.

-- usec is Redis' own clock in microseconds. No client clock is ever used.
-- Arithmetic converts TIME's two strings once each; tonumber would convert
-- each twice (it checks, then converts).
local function usec()
  local t = redis.call('TIME')
  return t[1] * 1000000 + t[2]
end

-- num is tonumber for the arguments that repeat call after call: a limit's
-- units, window and cost, the grace, an epoch's grace end. Converting a
-- string is strtod (twice, in tonumber), a few hundred instructions for a
-- 16-digit number; looking up an interned string is a table read. The
-- table is the library's, emptied when it holds 256 strings.
local nums, nums_n = {}, 0
local function num(s)
  local v = nums[s]
  if v == nil then
    v = tonumber(s)
    if nums_n >= 256 then
      nums, nums_n = {}, 0
    end
    nums[s], nums_n = v, nums_n + 1
  end
  return v
end

-- suffixes memoizes check_def's ' <window_us>', by window.
local suffixes = {}

-- int formats an integer-valued number exactly; Lua's default conversion
-- would print a microsecond timestamp as 1.78e+15.
local function int(n)
  return string.format('%d', n)
end

-- member_cost reads the cost from "<id>|<cost>".
local function member_cost(m)
  return tonumber(string.match(m, '|(%d+)$'))
end

-- limit builds a limit's record from its keys and definition (units and
-- window_us as the caller sent them), and for a reservation its cost and
-- member. One constructor sizes the table once: growing it field by field
-- cost more than the rest of the record.
local function limit(log, total, units, window, cost, member)
  return {log = log, total = total, units = num(units), units_s = units, window = num(window), window_s = window,
    cost = cost, member = member}
end

-- check_def refuses a limit whose stored window differs from the caller's:
-- the caller would prune entries that still count for the others. (Another
-- capacity is a configuration change, not a hazard: the caller's is stored
-- with its next write.) It raises before the script has written anything.
local function check_def(name, l, v)
  if not v then
    return
  end
  -- The common case, the same window, is a suffix compare, which
  -- allocates nothing.
  local suffix = suffixes[l.window_s]
  if not suffix then
    suffix = ' ' .. l.window_s
    suffixes[l.window_s] = suffix
  end
  if #v > #suffix and string.find(v, suffix, #v - #suffix + 1, true) then
    return
  end
  local units, window = string.match(v, '^%-?%d+ (%d+) (%d+)$')
  if window and tonumber(window) ~= l.window then
    error({err = 'YTREND_CONFLICT ' .. name .. ' ' .. units .. ' ' .. window .. ' ' .. int(l.units) .. ' ' .. int(l.window)})
  end
end

-- total_value is a limit's total as stored: "<used> <units> <window_us>".
local function total_value(l, used)
  return int(used) .. ' ' .. l.units_s .. ' ' .. l.window_s
end

-- put_total writes a limit's total with its definition, or deletes it when
-- nothing is left in the window (the log still holds its certificate). SET
-- without an expiry clears any TTL, and PERSIST clears the log's: keys
-- written by a version that set TTLs stop being candidates for eviction.
-- (A grant writes its totals with MSET and no PERSIST: every sync, which
-- each process runs at its first contact and `ytrend run` every few
-- seconds, and a new epoch clear the logs' TTLs.)
local function put_total(l, used)
  if used > 0 then
    redis.call('SET', l.total, total_value(l, used))
    redis.call('PERSIST', l.log)
  else
    redis.call('DEL', l.total)
  end
end

-- sum_log recomputes a limit's usage from its members.
local function sum_log(l)
  local sum = 0
  for _, m in ipairs(redis.call('ZRANGE', l.log, 0, -1)) do
    sum = sum + member_cost(m)
  end
  return sum
end

-- prune removes the entries of l that have left the window and returns the
-- units still in use. v is the total as the caller read it (GET or MGET;
-- false if missing). The second result is true when the total must be
-- written (put_total) with the first: callers that record a grant write it
-- anyway, so prune never writes it itself.
--
-- The common case, nothing expired, costs one range read that returns
-- nothing (without scores to format: Redis spends more time printing a score
-- than finding it). A missing total is recomputed from the members. Whether
-- the log itself is still there is the certificate's business (epoch_check).
local function prune(l, v, now)
  local used = nil
  if v then
    local sp = string.find(v, ' ', 1, true)
    used = tonumber(sp and string.sub(v, 1, sp - 1) or v)
  end
  local cutoff = int(now - l.window)
  local expired = redis.call('ZRANGEBYSCORE', l.log, '-inf', cutoff)
  if #expired == 0 then
    if used == nil or used <= 0 then
      -- No total, or one that says the log is empty: count the members.
      local sum = sum_log(l)
      return sum, sum > 0 or used ~= nil
    end
    return used, false
  end
  redis.call('ZREMRANGEBYSCORE', l.log, '-inf', cutoff)
  if used == nil then
    return sum_log(l), true
  end
  for _, m in ipairs(expired) do
    used = used - member_cost(m)
  end
  if used <= 0 then
    -- The total said no more than what expired: make sure from the members.
    used = sum_log(l)
  end
  return used, true
end

-- mark_end reads the end (microseconds) from a mark's value
-- "<until_us> <reason>"; 0 when there is no mark.
local function mark_end(v)
  if not v then
    return 0
  end
  return tonumber(string.match(v, '^(%d+)'))
end

-- mark_until reads the end (microseconds) of an upstream mark, 0 if none.
local function mark_until(key)
  return mark_end(redis.call('GET', key))
end

-- certificate is the member that says a log belongs to epoch id. '~' is
-- not allowed in a reservation id, and cost 0 keeps it out of every sum.
local function certificate(id)
  return '~' .. id .. '|0'
end

-- server_id is the run id of the Redis process that holds the keys. A
-- restart (from an RDB or AOF file that may be older than the last grants)
-- and a failover (to a replica that may have missed some) both change it,
-- so the books are certified by the process that holds them, not only by
-- what the keys say: a snapshot carries its epoch key and its certificates
-- back in time with it.
--
-- INFO server costs as much as a reservation's other commands together, and
-- a process's run id never changes, so it is read once per load of the
-- library: run_id is a local of the library, which lives in this process's
-- Lua VM and nowhere else (not in a key, a snapshot or a replica). Whatever
-- replaces the library (a restart, FUNCTION LOAD REPLACE, FUNCTION FLUSH, a
-- replica's full sync) runs this file again and starts without it.
local run_id = nil
local function server_id()
  if run_id then
    return run_id
  end
  local info = redis.call('INFO', 'server')
  -- A plain find, then a match anchored there: an unanchored pattern
  -- tries every position of the section.
  local at = string.find(info, 'run_id:', 1, true)
  local id = at and string.match(info, '^%x+', at + 7)
  if not id then
    return 'unknown'
  end
  run_id = id
  return id
end

-- parse_epoch reads the epoch key's value (false if missing): id (nil when
-- missing), grace_until_us, seq and the server's run id ('' in a value
-- written before it was kept).
local function parse_epoch(v)
  if not v then
    return nil, 0, 0, ''
  end
  local id, grace, seq, run = string.match(v, '^(%S+) (%d+) ?(%d*) ?(%x*)$')
  if not id then
    return nil, 0, 0, ''
  end
  -- The grace end stays the same for the epoch's life: num remembers it.
  return id, num(grace), seq == '' and 0 or seq + 0, run
end

-- epoch_value is the epoch key's value "<id> <grace_until_us> <seq> <run id>".
local function epoch_value(id, grace_until, seq, run)
  return id .. ' ' .. int(grace_until) .. ' ' .. int(seq) .. ' ' .. run
end

-- put_epoch writes the epoch key. It has no TTL.
local function put_epoch(key, id, grace_until, seq, run)
  redis.call('SET', key, epoch_value(id, grace_until, seq, run))
end

-- new_epoch starts epoch id after a loss: its grace, its info, and every
-- log certified for it. The entries that survived stay: they are real
-- grants, and replays are idempotent.
local function new_epoch(key, info, id, grace, now, limits, run)
  local grace_until = now + grace
  put_epoch(key, id, grace_until, 0, run)
  redis.call('DEL', info)
  redis.call('HSET', info, 'created', int(now), 'rebuilt', int(now), 'restored', '0')
  local cert = certificate(id)
  for _, l in ipairs(limits) do
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', l.log, '+inf', '+inf')) do
      redis.call('ZREM', l.log, m)
    end
    redis.call('ZADD', l.log, '+inf', cert)
    redis.call('PERSIST', l.log)
  end
  return grace_until
end

-- epoch_check certifies the books before anything is decided. v is the epoch
-- key as read; expected the epoch the caller last saw ('' for none) and seen
-- the highest seq it saw in it; run the server's run id (server_id). The
-- books are lost when the epoch key is missing (even on a brand-new Redis:
-- nobody can tell a first start from a restart, so the first start costs
-- one grace), when another server process holds it (a restart or a
-- failover, which may have dropped the last grants even when every key is
-- there), when any log lacks the epoch's certificate (it was evicted or
-- deleted, alone or with the rest), or when the caller saw a seq the ledger
-- no longer has (acknowledged writes were lost). Then a new epoch starts
-- (new_epoch), and every process replays before it spends.
-- Returns id, grace_until_us, seq, replay (the epoch is not the caller's:
-- it must replay its record before it spends), lost (this call found the
-- loss and started the epoch it names).
local function epoch_check(key, info, v, expected, seen, candidate, grace, now, limits, run)
  local id, grace_until, seq, held_by = parse_epoch(v)
  local lost = id == nil or held_by ~= run or (id == expected and seen > seq)
  if not lost then
    -- ZRANK, not ZSCORE: both find the member, but ZSCORE's reply is a
    -- double (+inf), which Redis prints with snprintf for more than the
    -- lookup costs.
    local cert = certificate(id)
    for _, l in ipairs(limits) do
      if not redis.call('ZRANK', l.log, cert) then
        lost = true
        break
      end
    end
  end
  if not lost then
    return id, grace_until, seq, expected ~= id, false
  end
  grace_until = new_epoch(key, info, candidate, grace, now, limits, run)
  return candidate, grace_until, 0, true, true
end

-- granted_before returns the time a reservation was granted at, if it was (a
-- retry whose reply was lost), else false: limits are reserve.lua's, whose
-- members name the reservation. Its entry is then still in the logs that
-- count it; a refused id left no trace and is simply decided again.
local function granted_before(limits)
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

-- wait_for walks the oldest entries of limit l (of reserve.lua, with in_use
-- units in its window) until enough units have left for its cost to fit:
-- the oldest entry alone under-states the wait whenever cost > 1.
local function wait_for(l, in_use, now)
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
