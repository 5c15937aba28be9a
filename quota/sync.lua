-- sync.lua: certify the ledger's epoch, replay grants this process holds into
-- it, and copy the log out for the process's mirror. Replays are fail-open
-- grants made while Redis was unreachable, the whole record (and mirror)
-- after the books were lost, or the audit that re-adds whatever a failover
-- dropped. ZADD NX on the member the grant had ("<id>|<cost>") makes them
-- idempotent: nothing is ever counted twice.
--
-- KEYS[1], KEYS[2]         ytrend:{cred}:epoch, ytrend:{cred}:epoch:info
-- KEYS[2i+1], KEYS[2i+2]   ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                  the epoch the caller last saw ('' for none)
-- ARGV[2]                  a fresh epoch id, used if the books are found lost
-- ARGV[3]                  grace_us (see reserve.lua)
-- ARGV[4]                  number of entries m
-- ARGV[5]                  mode: '0' plain; '1' restoring after a loss the caller met (the entries
--                          it adds count as restored, though the epoch is now the one it saw);
--                          'audit' the caller's record, all of which the ledger should hold: an
--                          entry it lacks means it lost acknowledged grants, which is a loss
-- ARGV[6]                  seen: the highest seq the caller saw in the epoch of ARGV[1] (0 for none)
-- ARGV[3i+4 .. 3i+6]       units_i, window_us_i, since_i: copy limit i's entries
--                          scored above since_i ('' copies nothing, '-inf' the whole log)
-- then per entry (2+n values): id, at_us, cost_1, ..., cost_n   (cost 0: not counted by limit i)
-- Reply: {added, now_us, epoch, grace_until_us, restored, seq, lost, copy_1, ..., copy_n}
--   added     entries that added at least one member
--   restored  1 when the epoch was not the caller's: this replay restored lost books
--   seq       the epoch's write count after this call
--   lost      1 when this call found the books lost and started the epoch it names
--   copy_i    {count, member, score, member, score, ...}: the entries of limit i in its window
--             (count, certificate excluded) and those scored above since_i, oldest first

local n = (#KEYS - 2) / 2
local m = tonumber(ARGV[4])
local now = usec()

local mget = {KEYS[1]}
for i = 1, n do
  mget[i + 1] = KEYS[2 * i + 2]
end
local state = call('MGET', unpack(mget))

local limits = {}
for i = 1, n do
  local a = 3 * i + 4
  local l = limit(KEYS[2 * i + 1], KEYS[2 * i + 2], ARGV[a], ARGV[a + 1])
  l.since = ARGV[a + 2]
  read_total(i, l, state[i + 1])
  limits[i] = l
end

for _, l in ipairs(limits) do
  prune(l, now)
end

local run = server_id()
local epoch, grace_until, seq, restored, lost = epoch_check(KEYS[1], KEYS[2], state[1], ARGV[1], tonumber(ARGV[6]),
  ARGV[2], tonumber(ARGV[3]), now, limits, run)
restored = restored and ARGV[1] ~= ''
if lost then
  for _, l in ipairs(limits) do
    recount(l)
  end
end

local added = 0
local base = 7 + 3 * n
for e = 0, m - 1 do
  local a = base + e * (2 + n)
  local id = ARGV[a]
  -- A client clock ahead of Redis must not make an entry outlive its window.
  local at = math.min(tonumber(ARGV[a + 1]), now)
  local any = false
  for i, l in ipairs(limits) do
    local cost = tonumber(ARGV[a + 1 + i])
    if cost > 0 and at > now - l.window then
      local at_s = int(at)
      if call('ZADD', l.log, 'NX', at_s, id .. '|' .. ARGV[a + 1 + i]) == 1 then
        -- An entry from the past may be older than the log's oldest.
        entered(l, at, at_s)
        l.used, l.stale = l.used + cost, true
        any = true
      end
    end
  end
  if any then
    added = added + 1
  end
end

for _, l in ipairs(limits) do
  if l.stale then
    put_total(l)
  end
  -- A grant does not clear a log's TTL (one a version that set TTLs left):
  -- every sync does, so a process's first contact and each watch tick do.
  call('PERSIST', l.log)
end
if added > 0 and ARGV[5] == 'audit' and not restored and not lost then
  -- The ledger had lost grants it had acknowledged, and others may have
  -- spent them meanwhile: every process replays, and waits the grace.
  epoch, lost = ARGV[2], true
  grace_until = new_epoch(KEYS[1], KEYS[2], epoch, tonumber(ARGV[3]), now, limits, run)
  seq = 0
end
if added > 0 then
  seq = seq + 1
  put_epoch(KEYS[1], epoch, grace_until, seq, run)
  if restored or lost or ARGV[5] == '1' then
    call('HINCRBY', KEYS[2], 'restored', added)
  end
end

local r = {added, now, epoch, grace_until, restored and 1 or 0, seq, lost and 1 or 0}
for i, l in ipairs(limits) do
  local copy = {call('ZCOUNT', l.log, '-inf', '(+inf')}
  if l.since ~= '' then
    local from = l.since == '-inf' and '-inf' or '(' .. l.since
    local page = call('ZRANGEBYSCORE', l.log, from, '(+inf', 'WITHSCORES')
    for j = 1, #page do
      copy[j + 1] = page[j]
    end
  end
  r[7 + i] = copy
end
return r
