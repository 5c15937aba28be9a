-- window.lua: the functions every quota script shares. It is prepended to
-- each script's own file (see redis.go), so a script is window.lua followed by
-- the file named after it.
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

-- limit builds a limit's record from its keys and definition, and for a
-- reservation its cost and member. One constructor sizes the table once:
-- growing it field by field cost more than the rest of the record.
local function limit(log, total, units, window, ttl, cost, member)
  return {log = log, total = total, units = tonumber(units), window = tonumber(window), window_s = window, ttl = ttl,
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
-- nothing is left in the window (the log still holds its certificate). SET
-- without an expiry clears any TTL, and PERSIST clears the log's: keys
-- written by a version that set TTLs stop being candidates for eviction.
local function put_total(l, used)
  if used > 0 then
    redis.call('SET', l.total, int(used) .. ' ' .. int(l.units) .. ' ' .. l.window_s)
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
local function server_id()
  local info = redis.call('INFO', 'server')
  -- A plain find, then a match anchored there: an unanchored pattern
  -- tries every position of the section.
  local at = string.find(info, 'run_id:', 1, true)
  return at and string.match(info, '^%x+', at + 7) or 'unknown'
end

-- parse_epoch reads the epoch key's value (false if missing): id (nil when
-- missing), grace_until_us, seq and the server's run id ('' in a value
-- written before it was kept).
local function parse_epoch(v)
  if not v then
    return nil, 0, 0, ''
  end
  local id, grace, seq, run = string.match(v, '^(%S+) (%d+) ?(%d*) ?(%x*)$')
  return id, tonumber(grace) or 0, tonumber(seq) or 0, run or ''
end

-- put_epoch writes the epoch key. It has no TTL.
local function put_epoch(key, id, grace_until, seq, run)
  redis.call('SET', key, id .. ' ' .. int(grace_until) .. ' ' .. int(seq) .. ' ' .. run)
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
    local cert = certificate(id)
    for _, l in ipairs(limits) do
      if not redis.call('ZSCORE', l.log, cert) then
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
