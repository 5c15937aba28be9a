// Package quota is ytrend's shared YouTube API budget: every call reserves
// its units here first, and a refusal stops the run before Google would.
//
// A credential (a budget name such as "main", never the API key) has one or
// more limits, each an exact, weighted sliding-window log: units spent in the
// trailing window, with a per-call cost table. The default is 9,500 units per
// 24h for everything plus 1,000 units per hour for search.list alone.
//
// # Key decisions
//
// Clock: the backend's. On Redis every script reads redis.call('TIME') in
// microseconds; no client clock enters a decision, so hosts with skewed
// clocks still share one window. The embedded ledger reads the host clock
// once per reservation, inside the write transaction.
//
// Atomic: one reservation is one Lua script (Redis) or one BEGIN IMMEDIATE
// transaction (ledger) that prunes every limit, checks all of them, and only
// then records the reservation in all of them. A refusal consumes nothing
// anywhere. Each reservation is a single log entry "<id>|<cost>" beside a
// running total, so a 100-unit call costs the time and memory of a 1-unit
// call, and its Retry-After is exact: the oldest entries are walked until
// enough units leave the window for this cost to fit.
//
// Fails open: only the calls whose Policy says so (default: videos.list),
// and only when the backend cannot be asked (unreachable, timed out after
// Config.Timeout). Such a grant is journaled in SQLite and added to the
// backend the next time it answers, so the books lose nothing. Everything
// else fails closed with ErrBackend, which is distinct from ErrRefused.
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
// NewRedis keeps the log in Redis, under keys that share the hash tag
// ytrend:{<credential>}: so it runs on Redis Cluster; keys expire a little
// after their window when idle. NewLedger keeps it in the archive's SQLite
// file (migrations/0002_quota.sql), safe for every process on one host.
package quota
