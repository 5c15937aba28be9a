-- window.lua: one decision of the sliding-window counter (ratelimit.decide
-- in Go is the same arithmetic; TestScriptMatchesGo holds them together).
--
-- KEYS[1]  ytrend:ratelimit:{client}  hash: b = current window's index,
--          c = requests admitted in it, p = in the window before
-- ARGV[1]  requests allowed per window (n)
-- ARGV[2]  window in milliseconds
-- ARGV[3]  now in milliseconds, or '' for Redis' clock (production: every
--          serve process then shares one clock)
-- Reply: {allowed (0/1), remaining, reset_ms, retry_after_ms}

local n = tonumber(ARGV[1])
local win = tonumber(ARGV[2])
local now
if ARGV[3] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[3])
end

local idx = math.floor(now / win)
local h = redis.call('HMGET', KEYS[1], 'b', 'c', 'p')
local b, c, p = tonumber(h[1]), tonumber(h[2]) or 0, tonumber(h[3]) or 0
if b == nil then
  b, c, p = idx, 0, 0
end
if b == idx - 1 then
  p, c = c, 0
elseif b < idx - 1 then
  p, c = 0, 0
elseif b > idx then
  idx = b -- the clock went back: count in the newer window
end

local elapsed = now - idx * win
if elapsed < 0 then elapsed = 0 end
if elapsed > win then elapsed = win end
local est = p * (win - elapsed) + c * win
local allowed = 0
if est + win <= n * win then
  c = c + 1
  est = est + win
  allowed = 1
end
redis.call('HSET', KEYS[1], 'b', idx, 'c', c, 'p', p)
redis.call('PEXPIRE', KEYS[1], 2 * win)

local remaining = math.floor((n * win - est) / win)
if remaining < 0 then remaining = 0 end
local reset, retry = win - elapsed, 0
if allowed == 0 and remaining == 0 then
  if c + 1 <= n and p > 0 then
    local e = win - math.floor((n - c - 1) * win / p)
    reset = math.max(1, e - elapsed)
  else
    local rest = win - elapsed
    if c == 0 then
      reset = rest
    else
      local e = win - math.floor((n - 1) * win / c)
      reset = rest + math.max(0, e)
    end
  end
  retry = reset
end
return {allowed, remaining, reset, retry}
