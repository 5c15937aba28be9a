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
--   ytrend:{cred}:total:<limit>  string "<used> <units> <window_us> <oldest_us>":
--                                the sum of the members' costs, the limit's
--                                definition as the processes spending from it
--                                agreed, and a bound: no member is scored
--                                below oldest_us (0 when none is known), so
--                                nothing can have expired while
--                                oldest_us > now - window_us. "<used> <units>
--                                <window_us>" and a plain "<used>" are from
--                                versions before (see read_total)
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

-- The globals the scripts call, as locals of the library: bind sets them
-- at each load's first call (every function of the library starts with
-- `if not call then bind() end`, see redis.go). A function's globals are an
-- empty table whose __index is the real one, so each use of a global name
-- is two table lookups and a metamethod, about 200 instructions; a local is
-- one register read. The library's own code cannot bind them as it loads:
-- only redis.register_function and redis.log exist then. The real globals
-- are read-only (Redis protects them), so what bind read stays right for
-- as long as the library is loaded.
local call, tonumber, unpack, ipairs, concat, format, find, sub, match, gmatch, byte
local function bind()
  local g = _G
  call, tonumber, unpack, ipairs, concat = g.redis.call, g.tonumber, g.unpack, g.ipairs, g.table.concat
  local s = g.string
  format, find, sub, match, gmatch, byte = s.format, s.find, s.sub, s.match, s.gmatch, s.byte
end

-- usec is Redis' own clock in microseconds. No client clock is ever used.
-- Arithmetic converts TIME's two strings once each; tonumber would convert
-- each twice (it checks, then converts).
local function usec()
  local t = call('TIME')
  return t[1] * 1000000 + t[2]
end

-- usec_s is usec with the same time as a string of digits, as a log's
-- scores and a total's bound are written: TIME's seconds, then its
-- microseconds padded to six digits. Joining three strings costs about a
-- third of what string.format('%d') does, and Lua's own number conversion
-- would print 1.78e+15.
local pad = {'00000', '0000', '000', '00', '0', ''}
local function usec_s()
  local t = call('TIME')
  local s, us = t[1], t[2]
  return s * 1000000 + us, s .. pad[#us] .. us
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

-- int formats an integer-valued number exactly; Lua's default conversion
-- would print a microsecond timestamp as 1.78e+15.
local function int(n)
  return format('%d', n)
end

-- member_cost reads the cost from "<id>|<cost>".
local function member_cost(m)
  return tonumber(match(m, '|(%d+)$'))
end

-- limit builds a limit's record from its keys and definition (units and
-- window_us as the caller sent them). mid is what a total of this
-- definition holds between its used and its oldest fields. The record also
-- carries, per call, what prune found: used (and used_s, the same as a
-- string when the call has it: nil after a recount), oldest (and oldest_s),
-- stale (the total must be written); and the total last parsed or built
-- (last_v) with what it says.
local function limit(log, total, units, window)
  return {log = log, total = total, units = num(units), units_s = units, window = num(window), window_s = window,
    mid = ' ' .. units .. ' ' .. window .. ' ', cost = 0, member = nil,
    used = 0, used_s = nil, oldest = 0, oldest_s = '0', stale = false,
    last_v = false, last_used = 0, last_used_s = '0', last_oldest = 0, last_oldest_s = '0'}
end

-- mset and reply are reserve.lua's MSET arguments and reply, reused call
-- after call: a table built per call costs an allocation, and each element
-- appended past its constructor's size a resize. Each call sets what it
-- uses (and the reply ends at its first nil, which the call sets).
local mset, reply = {}, {}

-- spec reads reserve.lua's ARGV[7], "<grace_us> <units_1> <window_us_1>
-- <cost_1> ...", into the grace and one limit record per limit (limit),
-- with its cost. A caller sends the same few specs call after call, so each
-- is read once per library load; the records are reused by every call with
-- that spec, which sets their per-call fields (keys, member, what prune
-- found) before it reads them. The table is emptied when it holds 64.
local specs, specs_n = {}, 0
local function spec(s)
  local sp = specs[s]
  if sp then
    return sp
  end
  local f = {}
  for w in gmatch(s, '%S+') do
    f[#f + 1] = w
  end
  sp = {grace = tonumber(f[1]), n = (#f - 1) / 3}
  for i = 1, sp.n do
    local l = limit(nil, nil, f[3 * i - 1], f[3 * i])
    l.cost, l.cost_s = tonumber(f[3 * i + 1]), f[3 * i + 1]
    sp[i] = l
  end
  if specs_n >= 64 then
    specs, specs_n = {}, 0
  end
  specs[s], specs_n = sp, specs_n + 1
  return sp
end

-- read_total reads a limit's total v as stored (false if missing) into l:
-- used and oldest with oldest_s, each nil when v does not say (a total
-- missing, or written by a version before oldest was kept). It refuses a
-- limit whose stored window differs from l's: the caller would prune
-- entries that still count for the others. (Another capacity is a
-- configuration change, not a hazard: the caller's is stored with its next
-- write.) Scripts read every total before they write anything, so that it
-- raises before anything is written.
local function read_total(i, l, v)
  -- (reserve.lua inlines this first case: keep the two alike.)
  if v and v == l.last_v then
    -- What this record last wrote (total_value), or last read: a process
    -- that spends alone reads next what it wrote last.
    l.used, l.used_s, l.oldest, l.oldest_s = l.last_used, l.last_used_s, l.last_oldest, l.last_oldest_s
    return
  end
  l.used, l.used_s, l.oldest, l.oldest_s = nil, nil, nil, nil
  if not v then
    return
  end
  -- The common case, the same definition, is one plain find: it can only
  -- match at the first space, since mid ends in one and oldest does not.
  local p = find(v, l.mid, 1, true)
  if p then
    -- The oldest stays the same call after call: num remembers it.
    local used_s, oldest_s = sub(v, 1, p - 1), sub(v, p + #l.mid)
    l.used, l.used_s, l.oldest, l.oldest_s = tonumber(used_s), used_s, num(oldest_s), oldest_s
    l.last_v, l.last_used, l.last_used_s, l.last_oldest, l.last_oldest_s = v, l.used, used_s, l.oldest, oldest_s
    return
  end
  local used, units, window, oldest_s = match(v, '^(%-?%d+) ?(%d*) ?(%d*) ?(%d*)$')
  if used == '0' then
    -- An empty limit: its definition is replaced by the caller's, as it
    -- was when an empty log's total was deleted. (The members are
    -- counted, as for a missing total.)
    return
  end
  if window and window ~= '' and tonumber(window) ~= l.window then
    error({err = 'YTREND_CONFLICT ' .. i .. ' ' .. units .. ' ' .. window .. ' ' .. int(l.units) .. ' ' .. int(l.window)})
  end
  if used then
    l.used, l.used_s = tonumber(used), used
    if oldest_s ~= '' then
      l.oldest, l.oldest_s = tonumber(oldest_s), oldest_s
    end
  end
end

-- total_value is a limit's total as stored: "<used> <units> <window_us> <oldest_us>".
-- The callers write it at once, and read_total remembers it.
local function total_value(l)
  local used_s = int(l.used)
  local v = used_s .. l.mid .. l.oldest_s
  l.used_s = used_s
  l.last_v, l.last_used, l.last_used_s, l.last_oldest, l.last_oldest_s = v, l.used, used_s, l.oldest, l.oldest_s
  return v
end

-- entered lowers l's bound for a member scored at (µs; at_s the same as a
-- string), before l.used counts it.
local function entered(l, at, at_s)
  if l.used <= 0 or at < l.oldest then
    l.oldest, l.oldest_s = at, at_s
  end
end

-- put_total writes a limit's total with its definition and bound. SET
-- without an expiry clears any TTL, and PERSIST clears the log's: keys
-- written by a version that set TTLs stop being candidates for eviction.
-- (A grant writes its totals with MSET and no PERSIST: every sync, which
-- each process runs at its first contact and `ytrend run` every few
-- seconds, and a new epoch clear the logs' TTLs.)
local function put_total(l)
  call('SET', l.total, total_value(l))
  call('PERSIST', l.log)
  l.stale = false
end

-- sum_log recomputes a limit's usage from its members.
local function sum_log(l)
  local sum = 0
  for _, m in ipairs(call('ZRANGE', l.log, 0, -1)) do
    sum = sum + member_cost(m)
  end
  return sum
end

-- recount sets l's usage from its members, and its bound to none known (0),
-- which the next prune makes exact: after a loss, whatever the total said
-- no longer holds.
local function recount(l)
  l.used, l.used_s, l.oldest, l.oldest_s, l.stale = sum_log(l), nil, 0, '0', true
end

-- prune removes the entries of l that have left the window and sets l.used
-- to the units still in use, l.oldest to the bound, and l.stale when the
-- total must be written (put_total, or a grant's MSET): callers write it,
-- prune never does. l holds what read_total read.
--
-- The common case reads no more than the total: while its bound is inside
-- the window nothing can have expired. Otherwise a range read finds what
-- expired (nothing, when the bound was below the oldest member), and a
-- second the oldest entry left, which is the new bound. A total without a
-- bound, missing, or one that says the log is empty without one, is
-- recomputed from the members. Whether the log itself is still there is the
-- certificate's business (epoch_check).
local function prune(l, now)
  -- (reserve.lua inlines this first case: keep the two alike.)
  local used = l.used
  if l.oldest and used and used >= 0 and (used == 0 or l.oldest > now - l.window) then
    l.stale = false
    return
  end
  local cutoff = int(now - l.window)
  local expired = call('ZRANGEBYSCORE', l.log, '-inf', cutoff)
  if #expired > 0 then
    call('ZREMRANGEBYSCORE', l.log, '-inf', cutoff)
  end
  if used ~= nil and used > 0 then
    for _, m in ipairs(expired) do
      used = used - member_cost(m)
    end
  end
  if used == nil or used <= 0 then
    -- No total, or one that says no more than what expired: count the
    -- members.
    used = sum_log(l)
  end
  l.used, l.used_s, l.oldest, l.oldest_s, l.stale = used, nil, 0, '0', true
  if used > 0 then
    -- The oldest member left; the certificate ('~...', scored +inf) sorts
    -- last, so it comes first only in a log that holds no entries.
    local first = call('ZRANGE', l.log, 0, 0, 'WITHSCORES')
    if first[1] and byte(first[1]) ~= 126 then
      l.oldest, l.oldest_s = tonumber(first[2]), first[2]
    end
  end
end

-- mark_end reads the end (microseconds) from a mark's value
-- "<until_us> <reason>"; 0 when there is no mark.
local function mark_end(v)
  if not v then
    return 0
  end
  return tonumber(match(v, '^(%d+)'))
end

-- mark_until reads the end (microseconds) of an upstream mark, 0 if none.
local function mark_until(key)
  return mark_end(call('GET', key))
end

-- certificate is the member that says a log belongs to epoch id. '~' is
-- not allowed in a reservation id, and cost 0 keeps it out of every sum.
local cert_id, cert_v = nil, nil
local function certificate(id)
  if id ~= cert_id then
    cert_id, cert_v = id, '~' .. id .. '|0'
  end
  return cert_v
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
local run_id, run_tail = nil, nil
local function server_id()
  if run_id then
    return run_id
  end
  local info = call('INFO', 'server')
  -- A plain find, then a match anchored there: an unanchored pattern
  -- tries every position of the section.
  local at = find(info, 'run_id:', 1, true)
  local id = at and match(info, '^%x+', at + 7)
  if not id then
    return 'unknown'
  end
  run_id, run_tail = id, ' ' .. id
  return id
end

-- replication_id is the server's replication id (INFO replication,
-- master_replid), '' if it has none. A master keeps its id until it
-- becomes a replica, which takes its master's, or a replica is promoted,
-- which draws a new one (a master also draws one when it frees its backlog,
-- repl-backlog-ttl after its last replica left, and when a first replica
-- attaches to it without one). Read only when an epoch starts and once per
-- epoch per load of the library (checked): never on a reservation's common
-- path.
local function replication_id()
  local info = call('INFO', 'replication')
  local at = find(info, 'master_replid:', 1, true)
  return at and match(info, '^%x+', at + 14) or ''
end

-- checked[epoch key] is the epoch id whose replication id this load of the
-- library has compared with its server's (epoch_check): one per budget,
-- since every budget on the server lost its grants in a failback, and the
-- first call after it may be any budget's. An epoch started since (by
-- another library, which may not record the id) is checked again. Like
-- run_id, it lives in the library's own Lua state.
local checked = {}

-- parse_epoch reads the epoch key's value (false if missing): id (nil when
-- missing), grace_until_us, seq, the server's run id ('' in a value
-- written before it was kept), and the value's head "<id> <grace_until_us> "
-- (epoch_value). The value changes with every write, its seq; its head and
-- run id do not, so the head last read is remembered with what it says, and
-- a value that starts with it is two plain compares and one number.
local head_v, head_id, head_grace = nil, nil, 0
-- The value last written by epoch_value, and what it says: a process that
-- spends alone reads next what it wrote last.
local last_v, last_id, last_grace, last_seq, last_run, last_head = nil, nil, 0, 0, nil, nil
local function parse_epoch(v)
  if not v then
    return nil, 0, 0, '', nil
  end
  if v == last_v then
    return last_id, last_grace, last_seq, last_run, last_head
  end
  if head_v and run_tail and find(v, head_v, 1, true) == 1 then
    local tail = run_tail
    if #v > #head_v + #tail and find(v, tail, #v - #tail + 1, true) then
      local seq = tonumber(sub(v, #head_v + 1, #v - #tail))
      if seq then
        return head_id, head_grace, seq, run_id, head_v
      end
    end
  end
  local id, grace, seq, run = match(v, '^(%S+) (%d+) ?(%d*) ?(%x*)$')
  if not id then
    return nil, 0, 0, '', nil
  end
  head_v, head_id, head_grace = id .. ' ' .. grace .. ' ', id, tonumber(grace)
  return id, head_grace, seq == '' and 0 or seq + 0, run, head_v
end

-- epoch_value is the epoch key's value "<id> <grace_until_us> <seq> <run id>";
-- head is its "<id> <grace_until_us> " when the caller has it. The callers
-- write it at once, and parse_epoch remembers it. last_seq_s is the seq it
-- last wrote, as a string: a grant's reply carries it.
local last_seq_s = '0'
local function epoch_value(id, grace_until, seq, run, head)
  head = head or (id .. ' ' .. int(grace_until) .. ' ')
  last_seq_s = int(seq)
  local v = head .. last_seq_s .. ' ' .. run
  last_v, last_id, last_grace, last_seq, last_run, last_head = v, id, grace_until, seq, run, head
  return v
end

-- put_epoch writes the epoch key. It has no TTL.
local function put_epoch(key, id, grace_until, seq, run)
  call('SET', key, epoch_value(id, grace_until, seq, run, nil))
end

-- new_epoch starts epoch id after a loss: its grace, its info, and every
-- log certified for it. The entries that survived stay: they are real
-- grants, and replays are idempotent.
local function new_epoch(key, info, id, grace, now, limits, run)
  local grace_until = now + grace
  put_epoch(key, id, grace_until, 0, run)
  call('DEL', info)
  call('HSET', info, 'created', int(now), 'rebuilt', int(now), 'restored', '0', 'replid', replication_id())
  checked[key] = id
  local cert = certificate(id)
  for _, l in ipairs(limits) do
    for _, m in ipairs(call('ZRANGEBYSCORE', l.log, '+inf', '+inf')) do
      call('ZREM', l.log, m)
    end
    call('ZADD', l.log, '+inf', cert)
    call('PERSIST', l.log)
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
--
-- One loss keeps the run id: a failback. The old master, made a replica
-- of the promoted one, full-syncs its books, older than its own last
-- grants, and is promoted again. A full sync loads the library anew (it is
-- in the snapshot), so each load's first call for each epoch (checked)
-- compares the server's replication id with the one the epoch started
-- under: a server that has been a replica since holds another, and the
-- books are lost. (A partial resync keeps the library, and needs the
-- server's history to be a prefix of its master's: one that had granted
-- what the other lacks full-syncs.) An epoch started by a library that did
-- not record the id adopts the current one at this library's first call.
--
-- With used_only, a log is checked only where this call charges it or read
-- it (prune's slow path, which leaves its total stale): reserve.lua's grant
-- decides on the totals of the logs it charges, so a log it neither charges
-- nor reads cannot lead it to admit too much. The next call that does
-- charge or read it finds the loss before its decision, and so does every
-- sync (`ytrend run` syncs every few seconds).
-- Returns id, grace_until_us, seq, replay (the epoch is not the caller's:
-- it must replay its record before it spends), lost (this call found the
-- loss and started the epoch it names), and the epoch value's head
-- (parse_epoch; nil after a loss).
local function epoch_check(key, info, v, expected, seen, candidate, grace, now, limits, run, used_only)
  local id, grace_until, seq, held_by, head = parse_epoch(v)
  local lost = id == nil or held_by ~= run or (id == expected and seen > seq)
  if not lost and checked[key] ~= id then
    local started, now_id = call('HGET', info, 'replid'), replication_id()
    if not started then
      call('HSET', info, 'replid', now_id)
    elseif started ~= now_id then
      lost = true
    end
    if not lost then
      checked[key] = id
    end
  end
  if not lost then
    -- ZRANK, not ZSCORE: both find the member, but ZSCORE's reply is a
    -- double (+inf), which Redis prints with snprintf for more than the
    -- lookup costs.
    local cert = certificate(id)
    for i = 1, #limits do
      local l = limits[i]
      if (not used_only or l.cost > 0 or l.stale) and not call('ZRANK', l.log, cert) then
        lost = true
        break
      end
    end
  end
  if not lost then
    return id, grace_until, seq, expected ~= id, false, head
  end
  grace_until = new_epoch(key, info, candidate, grace, now, limits, run)
  return candidate, grace_until, 0, true, true, nil
end

-- granted_before returns the time a reservation was granted at, if it was (a
-- retry whose reply was lost), else false: limits are reserve.lua's, whose
-- members name the reservation. Its entry is then still in the logs that
-- count it; a refused id left no trace and is simply decided again.
local function granted_before(limits)
  for _, l in ipairs(limits) do
    if l.cost > 0 then
      local at = call('ZSCORE', l.log, l.member)
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
    local page = call('ZRANGE', l.log, start, start + batch - 1, 'WITHSCORES')
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
