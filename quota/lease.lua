-- lease.lua: the leader lease of `ytrend run` replicas sharing a credential.
-- Its value "<token> <holder>" is also the fence reserve.lua checks: a
-- reservation made for a leader that lost the lease is refused there.
--
-- KEYS[1]   ytrend:{cred}:leader       "<token> <holder>", expiring after the TTL
-- KEYS[2]   ytrend:{cred}:leader:seq   the last token handed out (no TTL)
-- ARGV[1]   'acquire', 'renew' or 'release'
-- ARGV[2]   holder: the replica's instance id
-- ARGV[3]   ttl_ms
-- ARGV[4]   token (renew, release)
-- Reply: {held, token, pttl_ms, now_us}
--   acquire: held 1 with the holder's token (a new one when the lease was
--            free, the same when it already held it); held 0 with the
--            current holder's token and remaining ttl
--   renew:   held 1 when the lease was still this holder's with this token
--   release: held 0; the lease is deleted if it was this holder's

local now = usec()
local v = call('GET', KEYS[1])
local op, holder, ttl = ARGV[1], ARGV[2], ARGV[3]
local mine = ARGV[4] .. ' ' .. holder

if op == 'acquire' then
  if not v then
    -- Tokens start from the clock (milliseconds), so they keep growing
    -- even across a Redis that lost the counter.
    if call('EXISTS', KEYS[2]) == 0 then
      call('SET', KEYS[2], int(math.floor(now / 1000)))
    end
    local token = call('INCR', KEYS[2])
    call('SET', KEYS[1], int(token) .. ' ' .. holder, 'PX', ttl)
    return {1, token, tonumber(ttl), now}
  end
  local token, who = match(v, '^(%d+) (.*)$')
  if who == holder then
    call('PEXPIRE', KEYS[1], ttl)
    return {1, tonumber(token), tonumber(ttl), now}
  end
  return {0, tonumber(token), call('PTTL', KEYS[1]), now}
elseif op == 'renew' then
  if v == mine then
    call('PEXPIRE', KEYS[1], ttl)
    return {1, tonumber(ARGV[4]), tonumber(ttl), now}
  end
  return {0, 0, 0, now}
elseif op == 'release' then
  if v == mine then
    call('DEL', KEYS[1])
  end
  return {0, 0, 0, now}
end
error({err = 'ERR lease.lua: unknown op ' .. op})
