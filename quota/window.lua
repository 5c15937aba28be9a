-- window.lua: the functions every quota script shares. It is prepended to
-- each script's own file (see redis.go), so a script is window.lua followed by
-- the file named after it.
--
-- A limit of a credential is two keys:
--   ytrend:{cred}:log:<limit>    sorted set, one member per reservation:
--                                "<id>|<cost>" scored by its grant time in
--                                microseconds of Redis TIME
--   ytrend:{cred}:total:<limit>  string "<used> <units> <window_us>": the sum
--                                of the members' costs, and the limit's
--                                definition as the processes spending from it
--                                agreed (a plain "<used>" is from before
--                                definitions were stored, and is accepted)
-- An entry with score s counts while s > now - window.
--
-- The ledger's identity is two keys without a TTL:
--   ytrend:{cred}:epoch          string "<epoch id> <grace_until_us>"
--   ytrend:{cred}:epoch:info     hash: created, rebuilt (0: never), restored
-- A reservation names the epoch its process last saw. Finding none, or
-- another, while the caller has seen one, means the books were lost: the
-- caller replays its own record of grants (sync.lua) before it may spend.

-- usec is Redis' own clock in microseconds. No client clock is ever used.
local function usec()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- int formats an integer-valued number exactly; Lua's default conversion
-- would print a microsecond timestamp as 1.78e+15.
local function int(n)
  return string.format('%d', n)
end

-- member_cost reads the cost from "<id>|<cost>".
local function member_cost(m)
  return tonumber(string.match(m, '|(%d+)$'))
end

-- limit builds a limit's record from its keys and definition.
local function limit(log, total, units, window, ttl)
  return {log = log, total = total, units = tonumber(units), window = tonumber(window), window_s = window, ttl = ttl}
end

-- check_def refuses a limit whose stored window differs from the caller's:
-- the caller would prune entries that still count for the others. (Another
-- capacity is a configuration change, not a hazard: the caller's is stored
-- with its next write.) It raises before the script has written anything.
local function check_def(name, l, v)
  if not v then
    return
  end
  -- The common case, the same window, is a suffix compare.
  local suffix = ' ' .. l.window_s
  if string.sub(v, -#suffix) == suffix then
    return
  end
  local units, window = string.match(v, '^%-?%d+ (%d+) (%d+)$')
  if window and tonumber(window) ~= l.window then
    error({err = 'YTREND_CONFLICT ' .. name .. ' ' .. units .. ' ' .. window .. ' ' .. int(l.units) .. ' ' .. int(l.window)})
  end
end

-- put_total writes a limit's total with its definition, or deletes it when
-- nothing is left in the window. The log's TTL is renewed with it: a log
-- must never expire before its total, or the total would be taken for
-- evidence that the log was lost.
local function put_total(l, used)
  if used > 0 then
    redis.call('SET', l.total, int(used) .. ' ' .. int(l.units) .. ' ' .. l.window_s, 'PX', l.ttl)
    redis.call('PEXPIRE', l.log, l.ttl)
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
-- The common case, nothing expired, costs a range read that returns nothing
-- and an EXISTS (both without scores to format: Redis spends more time
-- printing a score than finding it). A missing total is recomputed from the
-- members. The third result is true when the log is gone but its total says
-- units are in use: the log was deleted or evicted behind our back. That is
-- a loss of the books, never an empty window: the caller starts a new epoch
-- (epoch_check) so that every process replays its grants, and the total is
-- not renewed by new grants to over-count forever. With skip_orphan (a
-- limit this reservation does not charge) that check waits for a call that
-- charges it, or for the next sync.
local function prune(l, v, now, skip_orphan)
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
      return sum, sum > 0 or used ~= nil, false
    end
    if not skip_orphan and redis.call('EXISTS', l.log) == 0 then
      return 0, false, true
    end
    return used, false, false
  end
  redis.call('ZREMRANGEBYSCORE', l.log, '-inf', cutoff)
  if used == nil then
    return sum_log(l), true, false
  end
  for _, m in ipairs(expired) do
    used = used - member_cost(m)
  end
  if used <= 0 then
    -- The total said no more than what expired: make sure from the members.
    used = sum_log(l)
  end
  return used, true, false
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

-- epoch_check compares the ledger's epoch (v, as read from its key) with the
-- one the caller last saw (expected, '' for none). It creates a missing
-- epoch as candidate. A missing or different epoch while the caller had seen
-- one is a loss of the books, and so is a log lost under its total (lost,
-- from prune): then a new epoch starts, so that every process replays its
-- record. The first caller to notice a loss records when, and starts the
-- grace period during which nothing is admitted, so that the long-lived
-- processes restore their share first.
-- Returns the epoch id, grace_until_us, and whether the caller must replay
-- its record before it spends (true when the epoch is not the one it saw).
local function epoch_check(key, info, v, expected, candidate, grace, now, lost)
  local id, grace_until
  if v and not lost and expected ~= '' and string.sub(v, 1, #expected + 1) == expected .. ' ' then
    -- The common case: the epoch the caller saw.
    return expected, tonumber(string.sub(v, #expected + 2)), false
  end
  if v then
    id, grace_until = string.match(v, '^(%S+) (%d+)$')
    grace_until = tonumber(grace_until)
  end
  if id == nil or lost then
    lost = lost or expected ~= ''
    id, grace_until = candidate, 0
    if lost then
      grace_until = now + grace
    end
    redis.call('SET', key, id .. ' ' .. int(grace_until))
    redis.call('DEL', info)
    redis.call('HSET', info, 'created', int(now), 'rebuilt', lost and int(now) or '0', 'restored', '0')
    return id, grace_until, lost
  end
  if expected == '' or expected == id then
    return id, grace_until, false
  end
  -- Another process created this epoch; if it had seen none, nobody has
  -- called it a loss yet.
  if (redis.call('HGET', info, 'rebuilt') or '0') == '0' then
    grace_until = now + grace
    redis.call('SET', key, id .. ' ' .. int(grace_until))
    redis.call('HSET', info, 'rebuilt', int(now))
    if redis.call('HEXISTS', info, 'created') == 0 then
      redis.call('HSET', info, 'created', int(now), 'restored', '0')
    end
  end
  return id, grace_until, true
end
