// Package quota is ytrend's shared YouTube API budget: every call reserves
// its units here first, and a refusal stops the run before Google would.
//
// A credential (a budget name such as "main", never the API key) has one or
// more limits, each an exact, weighted sliding-window log: units spent in the
// trailing window, with a per-call cost table. The default is 9,500 units per
// 24h for everything plus 1,000 units per hour for search.list alone.
//
// # Glossary
//
// One word per concept, in the code, the logs, the metrics and the README:
//
//   - grant: a reservation the budget admitted; refusal: one it did not.
//   - ledger: the shared log of grants, whatever keeps it: Redis, or the
//     embedded ledger (the SQLite backend, in the archive).
//   - epoch: the ledger's identity. A loss is any sign that the ledger lost
//     grants; it starts a new epoch and its grace, when nothing is admitted.
//     Wire names kept from before say rebuild for it (RefusedBy "rebuild",
//     Rebuilt, ytrend_quota_ledger_rebuilds_total).
//   - record: one process's own grants, in its archive; pending: a fail-open
//     grant the ledger has not seen yet. mirror: a `ytrend run` replica's
//     copy of the whole ledger.
//   - sync: the call that certifies the epoch and replays grants into the
//     ledger: an audit replays the whole record, a restore the record and
//     the mirror after a loss.
//   - lease and fence: who leads the `ytrend run` replicas, and the token
//     their reservations carry.
//
// # Key decisions
//
// Clock: the backend's. On Redis every script reads redis.call('TIME') in
// microseconds; no client clock enters a decision, so hosts with skewed
// clocks still share one window. The embedded ledger reads the host clock
// once per reservation, inside the write transaction.
//
// Atomic: one reservation is one Lua script (Redis: a function of one
// Function library, FCALL) or one BEGIN IMMEDIATE transaction (ledger) that
// prunes every limit, checks all of them, and only then records the
// reservation in all of them. A refusal consumes nothing
// anywhere. Each reservation is a single log entry "<id>|<cost>" beside a
// running total, so a 100-unit call costs the time and memory of a 1-unit
// call, and its Retry-After is exact: the oldest entries are walked until
// enough units leave the window for this cost to fit.
//
// Fails open: only the calls whose Policy says so (default: videos.list),
// only when the backend cannot be asked (a dial failure, a broken
// connection, a timeout after Config.Timeout: any answer, OOM and READONLY
// included, refuses), only within the room the backend's last answer left,
// only for a fenced reservation whose caller confirms its lease by its own
// clock (WithLeading), and only when the grant can be
// written to the process's record (WithRecord); it is added to the backend,
// before anything else is decided, the next time the backend answers.
// Everything else fails closed with ErrBackend, which is distinct from
// ErrRefused. A grant that cannot be recorded anywhere is never given: a
// grant the backend made reaches its caller only once it is in the record,
// or it is given back.
//
// Books that survive the ledger: every process keeps its own record of its
// grants (quota_grants in the archive it uses) for the longest window, and
// `ytrend run` also a mirror of the whole shared log (quota_mirror,
// WithMirror), copied on each Sync. On Redis the ledger's identity, its
// epoch, sits beside the data it certifies: every log holds the epoch's
// certificate, no key has a TTL, the epoch names the server process that
// holds it (INFO run_id, read once per load of the library: a local of the
// library lives exactly as long as that process's Lua VM, so it is the run
// id of the process running the call, never a stale one), and it counts its
// writes (seq), which every reply reports. A missing epoch (even on a brand-new Redis), another server
// process (any restart or failover), a server that has been a replica since
// the epoch started (its replication id, compared once per epoch per load
// of the library: a failback full-syncs an older copy under the same run
// id), a
// log without its certificate, a
// caller that saw more writes than the epoch holds, or an audit that finds
// one of its grants missing is a loss, found by whichever process calls
// first: a new
// epoch starts, nothing is admitted for Config.RebuildGrace (RefusedBy
// "rebuild"), and every process replays its record, and its mirror, before
// it spends (idempotent by reservation ID). The long-lived processes call
// Sync every few seconds (Watch), so they restore within the grace. What
// stays unknown is what was granted since the last mirror copy by processes
// that do not return within the grace (see the README for the bound).
//
// Limit definitions travel with the running totals: a process that gives a
// limit another window than the processes already spending from it would
// prune their entries, and is refused (ErrLimitConflict) until the window
// is empty. A leader lease per credential (Limiter.Leases) lets `ytrend run`
// replicas elect one to fire the schedule; reservations made WithFence of a
// lease that is no longer current are refused with ErrFenced.
//
// # Outcomes of Reserve
//
//   - granted: (Result, nil); Duplicate is set when the same ID had already
//     been granted (a retry after a lost reply) and nothing was charged.
//   - refused by the budget: Granted false, RefusedBy and RetryAfter set, and
//     a *RefusedError (errors.Is ErrRefused). RefusedBy is "upstream" while a
//     MarkExhausted mark is in force: Google said quotaExceeded, for the whole
//     credential or for one call's own bucket, and every process refuses
//     until the mark ends (by default Google's next reset, midnight in Los
//     Angeles).
//   - backend unreachable: FailOpen grant, or ErrBackend.
//   - bad input: ErrUnknownCall, ErrInvalidCost, ErrCostExceedsLimit or
//     ErrInvalidID, before the backend is touched: never an endless
//     "try later".
//
// # Backends
//
// NewRedis keeps the log in Redis (7.0 or later), under keys that share the
// hash tag ytrend:{<credential>}: so it runs on Redis Cluster. Its scripts
// are one Function library named for a hash of its code, loaded by the
// backend itself whenever a server answers "Function not found" (on every
// master of a Cluster; replicas, and so a Sentinel's next master, get it by
// replication). Versions of ytrend with other libraries, or with the EVAL
// scripts before them, share the same keys and formats, so they can spend
// from one ledger during an upgrade. Logs, totals and the
// epoch never expire (an idle log keeps its certificate), so volatile-*
// eviction never takes them; only marks and the lease have a TTL. NewSQLite keeps it in the archive's SQLite file
// (migrations/0002_quota.sql, 0003_quota_books.sql, 0012_quota_window.sql):
// the embedded ledger lives in the archive, safe for every process on one
// host. It keeps entries a week past their window, and counts a window from
// a total that triggers keep equal to the log's sum after a cutoff, moved
// to each call's window start over only the entries in between: a host
// clock that jumps forward and back loses nothing; an emptied log or a
// missing epoch row is a loss, a dropped table ErrLedgerDamaged, never an
// empty day.
package quota
