// Package ratelimit is a per-client request limiter for ytrend serve: the
// sliding-window counter, with a Redis backend shared by several processes
// and an in-memory one for a single process.
//
// Key decision: the counter keeps two fixed buckets per client (this window's
// count and the previous window's) and estimates the sliding window as
// previous × (the share of the previous window still inside the sliding one)
// + current. That is O(1) memory per client where an exact log of request
// times (what the quota package keeps for the API budget) would cost one
// entry per request. The price is an estimate: it assumes the previous
// window's requests were spread evenly, so a burst at a window boundary can
// let slightly more, or fewer, through than an exact log would. The error is
// measured in the tests and BENCHMARKS.md.
//
// On Redis each decision is one Lua script (window.lua) over one hash per
// client, keyed ytrend:ratelimit:{client} so that a Cluster keeps the key in
// one slot, and timed by Redis' own clock so that every serve process agrees
// on the window.
//
// What fails: a Redis limiter sits behind Fallback, a circuit breaker that
// hands the decisions to the process's own Memory limiter when Redis fails,
// so the limits stay enforced (per process) and no request waits on a Redis
// that is not there; one request per cooldown tries Redis again.
package ratelimit
