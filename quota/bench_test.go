package quota_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// Benchmarks: run them all in one go against one Redis, e.g.
//
//	go test -run '^$' -bench . -benchtime 3s ./quota
//
// Every throughput benchmark reports res/s (operations per second over the
// whole run), p50-µs and p99-µs (per-operation latency). "goroutines=N" means
// exactly N goroutines issue operations back to back. Memory benchmarks
// report bytes (MEMORY USAGE ... SAMPLES 0 summed over the credential's keys).

// benchConfig is one limit that never refuses, so every operation takes the
// grant path. Its window is 1s: the log holds about a second of grants and
// each reservation prunes what left, the steady state of a busy credential.
func benchConfig(cred string) quota.Config {
	return quota.Config{
		Credential:   cred,
		Costs:        map[string]int64{"videos.list": 1, "search.list": 100},
		Limits:       []quota.Limit{{Name: "bench", Units: 1 << 50, Window: time.Second}},
		Timeout:      5 * time.Second,
		RebuildGrace: noGrace,
	}
}

// runOps runs b.N calls of op on exactly n goroutines and reports
// throughput, latency percentiles and cpu-µs: this process's CPU time (user
// and system) per call, which a loaded machine inflates far less than wall
// time. For the embedded ledger, whose work is all in this process, 1e6 /
// cpu-µs is the throughput of one idle core.
func runOps(b *testing.B, n int, op func(ctx context.Context) error) {
	b.Helper()
	ctx := context.Background()
	cpu0 := cpuTime(b)
	var next atomic.Int64
	lat := make([][]time.Duration, n)
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	start := time.Now()
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, b.N/n+1)
			for next.Add(1) <= int64(b.N) {
				t := time.Now()
				if err := op(ctx); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				local = append(local, time.Since(t))
			}
			lat[g] = local
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime(b) - cpu0
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	pct := func(p float64) float64 {
		return float64(all[min(len(all)-1, int(p*float64(len(all))))]) / float64(time.Microsecond)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "res/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var goroutineCounts = []int{1, 16}

// benchClient is the client a deployment should use: ContextTimeoutEnabled
// lets go-redis end a call at Config.Timeout itself (see NewRedis).
func benchClient(b *testing.B) *redis.Client {
	opt := redistest.Client(b).Options()
	opt.ContextTimeoutEnabled = true
	rdb := redis.NewClient(opt)
	b.Cleanup(func() { rdb.Close() })
	return rdb
}

func BenchmarkRedisReserve(b *testing.B) {
	rdb := benchClient(b)
	for _, cost := range []int64{1, 100} {
		for _, n := range goroutineCounts {
			b.Run(fmt.Sprintf("cost=%d/goroutines=%d", cost, n), func(b *testing.B) {
				cfg := benchConfig(redistest.Prefix(b))
				l := newLimiter(b, cfg, quota.NewRedis(rdb))
				b.Cleanup(func() { deleteCredential(b, rdb, cfg.Credential) })
				report := serverCost(b, rdb, "fcall")
				runOps(b, n, func(ctx context.Context) error {
					_, err := l.Reserve(ctx, "", quota.WithCost(cost))
					return err
				})
				report()
			})
		}
	}
}

// BenchmarkRedisReserveDefault is the shipped configuration: videos.list is
// counted by one limit, search.list by two.
func BenchmarkRedisReserveDefault(b *testing.B) {
	rdb := benchClient(b)
	for _, call := range []string{"videos.list", "search.list"} {
		b.Run("call="+call, func(b *testing.B) {
			cfg := testConfig()
			cfg.Credential = redistest.Prefix(b)
			for i := range cfg.Limits {
				cfg.Limits[i].Units = 1 << 50 // never refuse
			}
			l := newLimiter(b, cfg, quota.NewRedis(rdb))
			b.Cleanup(func() { deleteCredential(b, rdb, cfg.Credential) })
			report := serverCost(b, rdb, "fcall")
			runOps(b, 1, func(ctx context.Context) error { _, err := l.Reserve(ctx, call); return err })
			report()
		})
	}
}

func BenchmarkRedisPing(b *testing.B) {
	rdb := benchClient(b)
	for _, n := range goroutineCounts {
		b.Run(fmt.Sprintf("goroutines=%d", n), func(b *testing.B) {
			report := serverCost(b, rdb, "ping")
			runOps(b, n, func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
			report()
		})
	}
}

// BenchmarkRedisRate is the reference: go-redis/redis_rate's GCRA AllowN,
// one key, never refusing.
func BenchmarkRedisRate(b *testing.B) {
	rdb := benchClient(b)
	limiter := redis_rate.NewLimiter(rdb)
	limit := redis_rate.Limit{Rate: 1 << 30, Burst: 1 << 30, Period: time.Second}
	for _, n := range goroutineCounts {
		b.Run(fmt.Sprintf("goroutines=%d", n), func(b *testing.B) {
			key := redistest.Prefix(b)
			b.Cleanup(func() { limiter.Reset(context.Background(), key) })
			report := serverCost(b, rdb, "evalsha")
			runOps(b, n, func(ctx context.Context) error {
				res, err := limiter.AllowN(ctx, key, limit, 1)
				if err == nil && res.Allowed != 1 {
					err = fmt.Errorf("redis_rate refused: %+v", res)
				}
				return err
			})
			report()
		})
	}
}

// floorScript is the commands reserve.lua runs on BenchmarkRedisReserve's
// grant path (a 1s window that prunes one entry per call), with none of its
// logic: no cost table, no Retry-After, no idempotency, no reply. It is the
// floor an exact log built from these commands cannot go under, and shows
// how much of reserve.lua's server time is Redis commands and how much Lua.
var floorScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cutoff = string.format('%d', now - 1000000)
redis.call('MGET', KEYS[1], KEYS[2], KEYS[4])
if #redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', cutoff) > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', cutoff)
end
redis.call('ZADD', KEYS[3], 'NX', string.format('%d', now), ARGV[1])
redis.call('PEXPIRE', KEYS[3], 2000)
redis.call('SET', KEYS[4], 1, 'PX', 2000)
return 1`)

func BenchmarkRedisCommandFloor(b *testing.B) {
	rdb := benchClient(b)
	cred := redistest.Prefix(b)
	keys := []string{"ytrend:{" + cred + "}:exhausted", "ytrend:{" + cred + "}:exhausted:x",
		"ytrend:{" + cred + "}:log:bench", "ytrend:{" + cred + "}:total:bench"}
	b.Cleanup(func() { deleteCredential(b, rdb, cred) })
	var id atomic.Int64
	report := serverCost(b, rdb, "evalsha")
	runOps(b, 1, func(ctx context.Context) error {
		return floorScript.Run(ctx, rdb, keys, fmt.Sprintf("%d|1", id.Add(1))).Err()
	})
	report()
}

// serverCost reads Redis' own accounting of cmd (INFO commandstats) now and
// returns a function that reports, as server-µs, the server's microseconds
// per call since then: the part of an operation that client and network
// noise do not reach. The benchmark must be the server's only user of cmd.
func serverCost(b *testing.B, rdb *redis.Client, cmd string) func() {
	b.Helper()
	calls0, usec0 := commandStat(b, rdb, cmd)
	return func() {
		calls, usec := commandStat(b, rdb, cmd)
		if calls > calls0 {
			b.ReportMetric(float64(usec-usec0)/float64(calls-calls0), "server-µs")
		}
	}
}

// commandStat returns calls and usec of cmd from INFO commandstats.
func commandStat(b *testing.B, rdb *redis.Client, cmd string) (calls, usec int64) {
	b.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatalf("INFO commandstats: %v", err)
	}
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		if _, err := fmt.Sscanf(rest, "calls=%d,usec=%d,", &calls, &usec); err != nil {
			b.Fatalf("INFO commandstats: %q: %v", line, err)
		}
		return calls, usec
	}
	return 0, 0
}

func BenchmarkLedgerReserve(b *testing.B) {
	for _, n := range goroutineCounts {
		b.Run(fmt.Sprintf("cost=1/goroutines=%d", n), func(b *testing.B) {
			l := newLimiter(b, benchConfig("bench"), quota.NewSQLite(openStore(b).Writer()))
			runOps(b, n, func(ctx context.Context) error {
				_, err := l.Reserve(ctx, "videos.list")
				return err
			})
		})
	}
}

// BenchmarkLedgerReserveWindow is the embedded ledger at a full day: the
// shipped configuration's daily limit (24h, never refusing here) holds
// 10,000 entries spread over its window, and a clock that moves 8.64s per
// reservation slides the window past one old entry for each new one, so
// every reservation counts exactly 10,000 entries in its window.
func BenchmarkLedgerReserveWindow(b *testing.B) {
	const entries = 10_000
	const window = 24 * time.Hour
	step := window / entries
	for _, n := range goroutineCounts {
		b.Run(fmt.Sprintf("entries=%d/goroutines=%d", entries, n), func(b *testing.B) {
			start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			var ticks atomic.Int64
			clock := func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * step) }
			cfg := oneLimit("bench", 1<<50, window, map[string]int64{"videos.list": 1})
			db := openStore(b)
			l := newLimiter(b, cfg, quota.NewSQLite(db.Writer(), quota.WithClock(clock)))
			mustGrant(b, l, "videos.list")
			// One entry per step before the first grant's, up to 10,000 with
			// the next grant: ticks 0, -1, ... of the clock.
			if _, err := db.Writer().Exec(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)
				INSERT INTO quota_log(credential, limit_name, id, cost, at) SELECT 'bench', 'only', 'fill' || i, 1, ? - (i - 1) * ? FROM k`,
				entries-2, start.UnixMicro(), step.Microseconds()); err != nil {
				b.Fatal(err)
			}
			if _, err := db.Writer().Exec(`UPDATE quota_epoch SET entries = entries + ? WHERE credential = 'bench'`, entries-2); err != nil {
				b.Fatal(err)
			}
			if r := mustGrant(b, l, "videos.list"); r.Limits[0].Used != entries {
				b.Fatalf("the window holds %d units, want %d", r.Limits[0].Used, entries)
			}
			runOps(b, n, func(ctx context.Context) error {
				_, err := l.Reserve(ctx, "videos.list")
				return err
			})
		})
	}
}

// BenchmarkSaturatedMemory fills the daily budget (9,500 units in 24h) with
// different mixes of reservations and reports the Redis memory its keys take.
// The log holds one member per reservation, so memory follows the number of
// reservations, not units.
func BenchmarkSaturatedMemory(b *testing.B) {
	rdb := redistest.Client(b)
	ctx := context.Background()
	if cfg, err := rdb.ConfigGet(ctx, "zset-max-listpack-entries").Result(); err == nil {
		b.Logf("server zset-max-listpack-entries = %v (a log with more members is a skiplist)", cfg["zset-max-listpack-entries"])
	}
	type part struct {
		call  string
		count int
	}
	mixes := []struct {
		name  string
		parts []part
	}{
		// 95 search pages: the mix the design's "a few KB" figure is about.
		{"search-95x100u", []part{{"search.list", 95}}},
		// The default schedule (8 regions hourly, 4 chart pages: 768
		// videos.list a day) plus search pages (100u + 1u for their
		// statistics) filling the rest, topped up with 1-unit calls.
		{"schedule-768chart+86search", []part{{"videos.list", 768}, {"search.list", 86}, {"videos.list", 86 + 46}}},
		// The default schedule alone: not saturated (768 of 9,500 units).
		{"schedule-only-768chart", []part{{"videos.list", 768}}},
		// The worst case: 9,500 one-unit reservations.
		{"unit-9500x1u", []part{{"videos.list", 9500}}},
	}
	for _, mix := range mixes {
		// Fill once, outside b.Run: the sub-benchmark's function runs
		// several times and cleans up after each run.
		cfg := testConfig()
		cfg.Credential = redistest.Prefix(b)
		cfg.Limits = cfg.Limits[:1] // the daily budget alone
		l := newLimiter(b, cfg, quota.NewRedis(rdb))
		b.Cleanup(func() { deleteCredential(b, rdb, cfg.Credential) })
		var res quota.Result
		var reservations int64
		for _, p := range mix.parts {
			for range p.count {
				res = mustGrant(b, l, p.call)
				reservations++
			}
		}
		units := res.Limits[0].Used
		keys, _ := rdb.Keys(ctx, "ytrend:{"+cfg.Credential+"}:*").Result()
		enc, _ := rdb.ObjectEncoding(ctx, "ytrend:{"+cfg.Credential+"}:log:daily").Result()

		b.Run("mix="+mix.name, func(b *testing.B) {
			b.Logf("%d reservations, %d units, log encoding %s", reservations, units, enc)
			var bytes int64
			for b.Loop() {
				bytes = 0
				for _, k := range keys {
					n, err := rdb.MemoryUsage(ctx, k, 0).Result()
					if err != nil {
						b.Fatalf("MEMORY USAGE %s: %v", k, err)
					}
					bytes += n
				}
			}
			b.ReportMetric(float64(bytes), "bytes")
			b.ReportMetric(float64(bytes)/float64(reservations), "bytes/reservation")
			b.ReportMetric(float64(units), "units")
			b.ReportMetric(float64(reservations), "reservations")
		})
	}
}

func deleteCredential(tb testing.TB, rdb *redis.Client, cred string) {
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "ytrend:{"+cred+"}:*").Result()
	if err == nil && len(keys) > 0 {
		rdb.Del(ctx, keys...)
	}
}

// BenchmarkMirrorEpochCheck is what the mirror adds to `ytrend run`'s epoch
// check on a saturated day: 9,500 one-unit reservations by other processes
// in the window. "incremental" is the check every redis.epoch_check with
// nothing new since the last copy (the usual case, audits included);
// "whole" a whole copy, written to the archive: the first, and one after
// each release.
func BenchmarkMirrorEpochCheck(b *testing.B) {
	rdb := benchClient(b)
	cfg := testConfig()
	cfg.Credential = redistest.Prefix(b)
	cfg.Limits = cfg.Limits[:1]
	b.Cleanup(func() { deleteCredential(b, rdb, cfg.Credential) })
	others := newLimiter(b, cfg, quota.NewRedis(rdb))
	for range 9500 {
		mustGrant(b, others, "videos.list")
	}
	for _, whole := range []bool{false, true} {
		name := "incremental"
		if whole {
			name = "whole"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			var daemon *quota.Limiter
			first := func() {
				daemon = newLimiter(b, cfg, quota.NewRedis(rdb), quota.WithRecord(openStore(b).Writer()), quota.WithMirror())
				if _, err := daemon.Sync(ctx, false); err != nil { // the first copy is whole
					b.Fatal(err)
				}
			}
			if !whole {
				first()
			}
			report := serverCost(b, rdb, "fcall")
			for b.Loop() {
				if whole {
					first()
					continue
				}
				if _, err := daemon.Sync(ctx, true); err != nil {
					b.Fatal(err)
				}
			}
			report()
		})
	}
}
