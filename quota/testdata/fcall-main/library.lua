#!lua name=ytrend_df7f2a43b51eab82f401c8f8eb0ce3f332792ee4ffafb53b7a657acbe4c570cf
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
-- window_us as the caller sent them). mid is what a total of this
-- definition holds between its used and its oldest fields. The record also
-- carries, per call, what prune found: used, oldest (and oldest_s, the same
-- as a string), stale (the total must be written); and the total last
-- parsed or built (last_v) with what it says.
local function limit(log, total, units, window)
  return {log = log, total = total, units = num(units), units_s = units, window = num(window), window_s = window,
    mid = ' ' .. units .. ' ' .. window .. ' ', cost = 0, member = nil,
    used = 0, oldest = 0, oldest_s = '0', stale = false,
    last_v = false, last_used = 0, last_oldest = 0, last_oldest_s = '0'}
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
  for w in string.gmatch(s, '%S+') do
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
  if v and v == l.last_v then
    -- What this record last wrote (total_value), or last read: a process
    -- that spends alone reads next what it wrote last.
    l.used, l.oldest, l.oldest_s = l.last_used, l.last_oldest, l.last_oldest_s
    return
  end
  l.used, l.oldest, l.oldest_s = nil, nil, nil
  if not v then
    return
  end
  -- The common case, the same definition, is one plain find: it can only
  -- match at the first space, since mid ends in one and oldest does not.
  local p = string.find(v, l.mid, 1, true)
  if p then
    -- The oldest stays the same call after call: num remembers it.
    local oldest_s = string.sub(v, p + #l.mid)
    l.used, l.oldest, l.oldest_s = tonumber(string.sub(v, 1, p - 1)), num(oldest_s), oldest_s
    l.last_v, l.last_used, l.last_oldest, l.last_oldest_s = v, l.used, l.oldest, oldest_s
    return
  end
  local used, units, window, oldest_s = string.match(v, '^(%-?%d+) ?(%d*) ?(%d*) ?(%d*)$')
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
    l.used = tonumber(used)
    if oldest_s ~= '' then
      l.oldest, l.oldest_s = tonumber(oldest_s), oldest_s
    end
  end
end

-- total_value is a limit's total as stored: "<used> <units> <window_us> <oldest_us>".
-- The callers write it at once, and read_total remembers it.
local function total_value(l)
  local v = int(l.used) .. l.mid .. l.oldest_s
  l.last_v, l.last_used, l.last_oldest, l.last_oldest_s = v, l.used, l.oldest, l.oldest_s
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
  redis.call('SET', l.total, total_value(l))
  redis.call('PERSIST', l.log)
  l.stale = false
end

-- sum_log recomputes a limit's usage from its members.
local function sum_log(l)
  local sum = 0
  for _, m in ipairs(redis.call('ZRANGE', l.log, 0, -1)) do
    sum = sum + member_cost(m)
  end
  return sum
end

-- recount sets l's usage from its members, and its bound to none known (0),
-- which the next prune makes exact: after a loss, whatever the total said
-- no longer holds.
local function recount(l)
  l.used, l.oldest, l.oldest_s, l.stale = sum_log(l), 0, '0', true
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
  local used = l.used
  if l.oldest and used and used >= 0 and (used == 0 or l.oldest > now - l.window) then
    l.stale = false
    return
  end
  local cutoff = int(now - l.window)
  local expired = redis.call('ZRANGEBYSCORE', l.log, '-inf', cutoff)
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', l.log, '-inf', cutoff)
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
  l.used, l.oldest, l.oldest_s, l.stale = used, 0, '0', true
  if used > 0 then
    -- The oldest member left; the certificate ('~...', scored +inf) sorts
    -- last, so it comes first only in a log that holds no entries.
    local first = redis.call('ZRANGE', l.log, 0, 0, 'WITHSCORES')
    if first[1] and string.byte(first[1]) ~= 126 then
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
  return tonumber(string.match(v, '^(%d+)'))
end

-- mark_until reads the end (microseconds) of an upstream mark, 0 if none.
local function mark_until(key)
  return mark_end(redis.call('GET', key))
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
  local info = redis.call('INFO', 'server')
  -- A plain find, then a match anchored there: an unanchored pattern
  -- tries every position of the section.
  local at = string.find(info, 'run_id:', 1, true)
  local id = at and string.match(info, '^%x+', at + 7)
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
  local info = redis.call('INFO', 'replication')
  local at = string.find(info, 'master_replid:', 1, true)
  return at and string.match(info, '^%x+', at + 14) or ''
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
  if head_v and run_tail and string.find(v, head_v, 1, true) == 1 then
    local tail = run_tail
    if #v > #head_v + #tail and string.find(v, tail, #v - #tail + 1, true) then
      local seq = tonumber(string.sub(v, #head_v + 1, #v - #tail))
      if seq then
        return head_id, head_grace, seq, run_id, head_v
      end
    end
  end
  local id, grace, seq, run = string.match(v, '^(%S+) (%d+) ?(%d*) ?(%x*)$')
  if not id then
    return nil, 0, 0, '', nil
  end
  head_v, head_id, head_grace = id .. ' ' .. grace .. ' ', id, tonumber(grace)
  return id, head_grace, seq == '' and 0 or seq + 0, run, head_v
end

-- epoch_value is the epoch key's value "<id> <grace_until_us> <seq> <run id>";
-- head is its "<id> <grace_until_us> " when the caller has it. The callers
-- write it at once, and parse_epoch remembers it.
local function epoch_value(id, grace_until, seq, run, head)
  head = head or (id .. ' ' .. int(grace_until) .. ' ')
  local v = head .. int(seq) .. ' ' .. run
  last_v, last_id, last_grace, last_seq, last_run, last_head = v, id, grace_until, seq, run, head
  return v
end

-- put_epoch writes the epoch key. It has no TTL.
local function put_epoch(key, id, grace_until, seq, run)
  redis.call('SET', key, epoch_value(id, grace_until, seq, run, nil))
end

-- new_epoch starts epoch id after a loss: its grace, its info, and every
-- log certified for it. The entries that survived stay: they are real
-- grants, and replays are idempotent.
local function new_epoch(key, info, id, grace, now, limits, run)
  local grace_until = now + grace
  put_epoch(key, id, grace_until, 0, run)
  redis.call('DEL', info)
  redis.call('HSET', info, 'created', int(now), 'rebuilt', int(now), 'restored', '0', 'replid', replication_id())
  checked[key] = id
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
-- Returns id, grace_until_us, seq, replay (the epoch is not the caller's:
-- it must replay its record before it spends), lost (this call found the
-- loss and started the epoch it names), and the epoch value's head
-- (parse_epoch; nil after a loss).
local function epoch_check(key, info, v, expected, seen, candidate, grace, now, limits, run)
  local id, grace_until, seq, held_by, head = parse_epoch(v)
  local lost = id == nil or held_by ~= run or (id == expected and seen > seq)
  if not lost and checked[key] ~= id then
    local started, now_id = redis.call('HGET', info, 'replid'), replication_id()
    if not started then
      redis.call('HSET', info, 'replid', now_id)
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
    for _, l in ipairs(limits) do
      if not redis.call('ZRANK', l.log, cert) then
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

redis.register_function{function_name = 'ytrend_df7f2a43b51eab82f401c8f8eb0ce3f332792ee4ffafb53b7a657acbe4c570cf_reserve', callback = function(KEYS, ARGV)
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
-- Reply: {now_us, epoch, seq, used_1, ..., used_n} for a plain grant (code 1, duplicate 0,
--         not lost; its grace is over), else
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
local now = usec()

-- One MGET reads the marks, the epoch, the lease and every total: each
-- redis.call costs about as much as the work it does, so the hot path keeps
-- their number down.
local state = redis.call('MGET', unpack(KEYS, 1, 4 + n))

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
  read_total(i, l, state[4 + i])
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

for i = 1, n do
  prune(limits[i], now)
end

local run = server_id()
-- ARGV[6] + 0, not tonumber: tonumber converts a string twice (it checks,
-- then converts), and seen is a new number call after call.
local epoch, grace_until, seq, replay, lost, head = epoch_check(KEYS[3], KEYS[5 + n], state[3], ARGV[2],
  ARGV[6] + 0, ARGV[3], sp.grace, now, limits, run)
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
local untilus, call_until = mark_end(state[1]), mark_end(state[2])
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
    local score = int(now)
    for i = 1, n do
      local l = limits[i]
      if l.cost > 0 and redis.call('ZADD', l.log, 'NX', score, l.member) == 0 then
        for j = 1, i - 1 do
          if limits[j].cost > 0 then
            redis.call('ZREM', limits[j].log, limits[j].member)
          end
        end
        duplicate = tonumber(redis.call('ZSCORE', l.log, l.member))
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
          entered(l, now, score)
          l.used = l.used + l.cost -- prune made it exact
        end
        if l.cost > 0 or l.stale then
          mset[k + 1], mset[k + 2] = l.total, total_value(l)
          k = k + 2
          l.stale = false
        end
      end
      mset[k + 1], mset[k + 2] = KEYS[3], epoch_value(epoch, grace_until, seq, run, head)
      redis.call('MSET', unpack(mset, 1, k + 2))
    end
  end
end

-- The totals pruning left stale, then the reply: the short one for a plain
-- grant (nearly every reply; each element costs ~900 instructions), else
-- the whole one. A grant is never in the grace (it would have been
-- refused), so its grace_until tells the caller nothing.
local r, k = reply, 9
if code == 1 and duplicate == 0 then
  r[1], r[2], r[3], k = now, epoch, seq, 3
else
  r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9] = code, refused_by, wait, now, duplicate, epoch, grace_until,
    seq, lost and 1 or 0
end
for i = 1, n do
  local l = limits[i]
  if l.stale then
    put_total(l)
  end
  r[k + i] = code == 2 and 0 or l.used
end
r[k + n + 1] = nil
return r

end}
redis.register_function{function_name = 'ytrend_df7f2a43b51eab82f401c8f8eb0ce3f332792ee4ffafb53b7a657acbe4c570cf_release', callback = function(KEYS, ARGV)
-- release.lua: remove a reservation whose call never left the process.
--
-- KEYS[2i-1], KEYS[2i]    ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                 reservation id (only [A-Za-z0-9_.:-], so it is a literal MATCH pattern)
-- ARGV[2i], ARGV[2i+1]    units_i, window_us_i
-- Reply: the number of entries removed (0: unknown id, or already outside every window)
-- Errors: YTREND_CONFLICT as in reserve.lua.

local pattern = ARGV[1] .. '|*'
local now = usec()
local n = #KEYS / 2
local limits = {}
for i = 1, n do
  limits[i] = limit(KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i], ARGV[2 * i + 1])
  read_total(i, limits[i], redis.call('GET', KEYS[2 * i]))
end
local removed = 0
for _, l in ipairs(limits) do
  prune(l, now)
  -- Release is rare; a scan of one credential's log is cheap enough.
  -- Removing members only raises the oldest: the bound still holds.
  local cursor = '0'
  repeat
    local page = redis.call('ZSCAN', l.log, cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = page[1]
    for j = 1, #page[2], 2 do
      local m = page[2][j]
      if redis.call('ZREM', l.log, m) == 1 then
        l.used = l.used - member_cost(m)
        removed = removed + 1
      end
    end
  until cursor == '0'
  put_total(l)
end
return removed

end}
redis.register_function{function_name = 'ytrend_df7f2a43b51eab82f401c8f8eb0ce3f332792ee4ffafb53b7a657acbe4c570cf_status', callback = function(KEYS, ARGV)
-- status.lua: prune and report every limit of a credential, its upstream
-- marks, its epoch and its leader lease.
--
-- KEYS[1]                   ytrend:{cred}:exhausted
-- KEYS[2 .. m+1]            ytrend:{cred}:exhausted:<call j>   (j = 1..m)
-- KEYS[m+2], KEYS[m+3]      ytrend:{cred}:epoch, ytrend:{cred}:epoch:info
-- KEYS[m+4]                 ytrend:{cred}:leader
-- KEYS[m+3+2i], KEYS[m+4+2i]  ytrend:{cred}:log:<limit i>, ytrend:{cred}:total:<limit i>   (i = 1..n)
-- ARGV[1]                   m
-- ARGV[2i], ARGV[2i+1]      units_i, window_us_i
-- Reply: {now_us, until_0, reason_0, ..., until_m, reason_m,
--         epoch, grace_until_us, created_us, rebuilt_us, restored, lease,
--         used_1, count_1, oldest_us_1, ..., used_n, count_n, oldest_us_n}
--   until_j/reason_j: the credential's mark (j = 0) and call j's; 0 and "" when none is in force
--   epoch is '' when the ledger has none yet; lease is "<token> <holder>" or ''
--   oldest_us_i is 0 when limit i's log is empty
-- Errors: YTREND_CONFLICT as in reserve.lua.

local m = tonumber(ARGV[1])
local now = usec()
local r = {now}
for j = 1, m + 1 do
  local v = redis.call('GET', KEYS[j])
  local untilus = mark_end(v)
  if untilus > now then
    table.insert(r, untilus)
    table.insert(r, string.match(v, '^%d+ (.*)$') or '')
  else
    table.insert(r, 0)
    table.insert(r, '')
  end
end

local epoch, grace_until = parse_epoch(redis.call('GET', KEYS[m + 2]))
local info = redis.call('HMGET', KEYS[m + 3], 'created', 'rebuilt', 'restored')
table.insert(r, epoch or '')
table.insert(r, tonumber(grace_until) or 0)
table.insert(r, tonumber(info[1]) or 0)
table.insert(r, tonumber(info[2]) or 0)
table.insert(r, tonumber(info[3]) or 0)
table.insert(r, redis.call('GET', KEYS[m + 4]) or '')

local base = m + 3
local limits = {}
for i = 1, (#KEYS - base - 1) / 2 do
  limits[i] = limit(KEYS[base + 2 * i], KEYS[base + 2 * i + 1], ARGV[2 * i], ARGV[2 * i + 1])
  read_total(i, limits[i], redis.call('GET', limits[i].total))
end
for _, l in ipairs(limits) do
  -- Status certifies nothing: a lost log reads as what is left, and the
  -- next reservation or sync finds the loss.
  prune(l, now)
  if l.stale then
    put_total(l)
  end
  local oldest = 0
  local first = redis.call('ZRANGEBYSCORE', l.log, '-inf', '(+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #first > 0 then
    oldest = tonumber(first[2])
  end
  table.insert(r, l.used)
  table.insert(r, redis.call('ZCOUNT', l.log, '-inf', '(+inf'))
  table.insert(r, oldest)
end
return r

end}
redis.register_function{function_name = 'ytrend_df7f2a43b51eab82f401c8f8eb0ce3f332792ee4ffafb53b7a657acbe4c570cf_mark', callback = function(KEYS, ARGV)
-- mark.lua: upstream said quotaExceeded; refuse reservations until the given
-- instant, on the whole credential or on some calls only. A mark already in
-- force that lasts longer is kept.
--
-- KEYS[1..m]   the marks to set: ytrend:{cred}:exhausted (whole credential)
--              or ytrend:{cred}:exhausted:<call>; each value "<until_us> <reason>",
--              expiring at until
-- ARGV[1]      until_us
-- ARGV[2]      reason
-- Reply: {set, now_us}
--   set is the number of marks written (a longer one kept counts as 0),
--   or -1 when until_us is not after now: nothing was written

local now = usec()
local untilus = tonumber(ARGV[1])
if untilus <= now then
  return {-1, now}
end
local set = 0
for _, key in ipairs(KEYS) do
  if mark_until(key) < untilus then
    redis.call('SET', key, ARGV[1] .. ' ' .. ARGV[2], 'PXAT', int(math.ceil(untilus / 1000)))
    set = set + 1
  end
end
return {set, now}

end}
redis.register_function{function_name = 'ytrend_df7f2a43b51eab82f401c8f8eb0ce3f332792ee4ffafb53b7a657acbe4c570cf_sync', callback = function(KEYS, ARGV)
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
local state = redis.call('MGET', unpack(mget))

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
      if redis.call('ZADD', l.log, 'NX', at_s, id .. '|' .. ARGV[a + 1 + i]) == 1 then
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
  redis.call('PERSIST', l.log)
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
    redis.call('HINCRBY', KEYS[2], 'restored', added)
  end
end

local r = {added, now, epoch, grace_until, restored and 1 or 0, seq, lost and 1 or 0}
for i, l in ipairs(limits) do
  local copy = {redis.call('ZCOUNT', l.log, '-inf', '(+inf')}
  if l.since ~= '' then
    local from = l.since == '-inf' and '-inf' or '(' .. l.since
    local page = redis.call('ZRANGEBYSCORE', l.log, from, '(+inf', 'WITHSCORES')
    for j = 1, #page do
      copy[j + 1] = page[j]
    end
  end
  r[7 + i] = copy
end
return r

end}
redis.register_function{function_name = 'ytrend_df7f2a43b51eab82f401c8f8eb0ce3f332792ee4ffafb53b7a657acbe4c570cf_lease', callback = function(KEYS, ARGV)
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
local v = redis.call('GET', KEYS[1])
local op, holder, ttl = ARGV[1], ARGV[2], ARGV[3]
local mine = ARGV[4] .. ' ' .. holder

if op == 'acquire' then
  if not v then
    -- Tokens start from the clock (milliseconds), so they keep growing
    -- even across a Redis that lost the counter.
    if redis.call('EXISTS', KEYS[2]) == 0 then
      redis.call('SET', KEYS[2], int(math.floor(now / 1000)))
    end
    local token = redis.call('INCR', KEYS[2])
    redis.call('SET', KEYS[1], int(token) .. ' ' .. holder, 'PX', ttl)
    return {1, token, tonumber(ttl), now}
  end
  local token, who = string.match(v, '^(%d+) (.*)$')
  if who == holder then
    redis.call('PEXPIRE', KEYS[1], ttl)
    return {1, tonumber(token), tonumber(ttl), now}
  end
  return {0, tonumber(token), redis.call('PTTL', KEYS[1]), now}
elseif op == 'renew' then
  if v == mine then
    redis.call('PEXPIRE', KEYS[1], ttl)
    return {1, tonumber(ARGV[4]), tonumber(ttl), now}
  end
  return {0, 0, 0, now}
elseif op == 'release' then
  if v == mine then
    redis.call('DEL', KEYS[1])
  end
  return {0, 0, 0, now}
end
error({err = 'ERR lease.lua: unknown op ' .. op})

end}
redis.register_function{function_name = 'ytrend_df7f2a43b51eab82f401c8f8eb0ce3f332792ee4ffafb53b7a657acbe4c570cf_time', flags = {'no-writes'}, callback = function(KEYS, ARGV)
-- time.lua: Redis' clock, for Ping and for MarkExhausted's default end.
--
-- KEYS: none
-- ARGV: none
-- Reply: now_us

return usec()

end}
