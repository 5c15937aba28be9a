-- window.lua: the functions every quota script shares. It is prepended to
-- each script's own file (see redis.go), so a script is window.lua followed by
-- the file named after it.
--
-- A limit of a credential is two keys:
--   ytrend:{cred}:log:<limit>    sorted set, one member per reservation:
--                                "<id>|<cost>" scored by its grant time in
--                                microseconds of Redis TIME
--   ytrend:{cred}:total:<limit>  string, the sum of the members' costs
-- An entry with score s counts while s > now - window.

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

-- prune removes the entries that have left the window and returns the units
-- still in use, keeping the total equal to the sum of the remaining costs.
-- used is the total as the caller read it (GET or MGET; false if missing).
-- With defer_total, a total that only needs decrementing is not written;
-- the second result is then true and the caller must SET it to the first.
-- A missing total, or one that says the log is empty, is recomputed from the
-- members. A total whose log vanished (evicted) over-counts until it expires:
-- the safe direction for a budget.
local function prune(log, total, used, now, window, ttl, defer_total)
  local cutoff = int(now - window)
  if not used then
    -- No total: usually no log either (both expire together), so one read
    -- of the whole log answers both what expired and what is still in use.
    local all = redis.call('ZRANGE', log, 0, -1, 'WITHSCORES')
    local sum, gone = 0, false
    for j = 1, #all, 2 do
      if tonumber(all[j + 1]) <= now - window then
        gone = true
      else
        sum = sum + member_cost(all[j])
      end
    end
    if gone then
      redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
    end
    if sum > 0 then
      redis.call('SET', total, sum, 'PX', ttl)
    end
    return sum, false
  end
  local expired = redis.call('ZRANGEBYSCORE', log, '-inf', cutoff)
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
  end
  used = tonumber(used)
  if #expired > 0 then
    local freed = 0
    for _, m in ipairs(expired) do
      freed = freed + member_cost(m)
    end
    used = used - freed
    if used > 0 then
      if defer_total then
        return used, true
      end
      redis.call('DECRBY', total, freed)
    end
  end
  if used > 0 then
    return used, false
  end
  -- The total says the log is empty: make sure, and drop the total if so.
  local sum = 0
  for _, m in ipairs(redis.call('ZRANGE', log, 0, -1)) do
    sum = sum + member_cost(m)
  end
  if sum > 0 then
    redis.call('SET', total, sum, 'PX', ttl)
  else
    redis.call('DEL', total)
  end
  return sum, false
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

