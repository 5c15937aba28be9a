package quota_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/testkit/redistest"
)

// The conformance suite: the semantics every Backend must have, run against
// real Redis and a real SQLite ledger.

func TestConformanceRedis(t *testing.T) {
	t.Parallel()
	testConformance(t, newRedis)
}

func TestConformanceLedger(t *testing.T) {
	t.Parallel()
	testConformance(t, newLedger)
}

func testConformance(t *testing.T, newBackend func(t *testing.T) quota.Backend) {
	tests := []struct {
		name string
		run  func(t *testing.T, b quota.Backend, cred string)
	}{
		{"ExactAdmission", testExactAdmission},
		{"WindowSlides", testWindowSlides},
		{"RetryAfterWeighted", testRetryAfterWeighted},
		{"PruneOnRefusal", testPruneOnRefusal},
		{"RefusalConsumesNothing", testRefusalConsumesNothing},
		{"LargestRetryAfterWins", testLargestRetryAfterWins},
		{"UncountedCall", testUncountedCall},
		{"ManualCost", testManualCost},
		{"Release", testRelease},
		{"IdempotentRetry", testIdempotentRetry},
		{"IdempotentRetryAcrossWindows", testIdempotentRetryAcrossWindows},
		{"MarkExhausted", testMarkExhausted},
		{"MarkExhaustedDefaultsToNextReset", testMarkExhaustedNextReset},
		{"MarkExhaustedOneCall", testMarkExhaustedOneCall},
		{"Status", testStatus},
		{"Observer", testObserver},
		{"SharedAcrossLimiters", testSharedAcrossLimiters},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newBackend(t), redistest.Prefix(t))
		})
	}
}

var (
	mixedCosts = map[string]int64{"one": 1, "seven": 7, "hundred": 100}
	smallCosts = map[string]int64{"one": 1, "seven": 7}
)

// testExactAdmission: with mixed costs 1/7/100 in a fixed pseudo-random
// order, the limiter admits exactly what a greedy model of a 100-unit budget
// admits, call by call, and fills it to exactly 100.
func testExactAdmission(t *testing.T, b quota.Backend, cred string) {
	l := newLimiter(t, oneLimit(cred, 100, time.Hour, mixedCosts), b)
	rng := rand.New(rand.NewPCG(2026, 3))
	names := []string{"one", "one", "one", "seven", "seven", "hundred"}
	var model, admitted int64
	var sawRefusal bool
	for i := range 120 {
		call := names[rng.IntN(len(names))]
		cost := mixedCosts[call]
		want := model+cost <= 100
		if want {
			model += cost
		}
		res := reserve(t, l, call)
		if res.Granted != want {
			t.Fatalf("call %d (%s, cost %d) with %d used: granted=%v, model says %v", i, call, cost, admitted, res.Granted, want)
		}
		if res.Granted {
			admitted += res.Cost
		} else {
			sawRefusal = true
			if res.RefusedBy != "only" || res.RetryAfter <= 0 || res.RetryAfter > time.Hour {
				t.Fatalf("call %d refused by %q after %s", i, res.RefusedBy, res.RetryAfter)
			}
		}
		if got := res.Limits[0].Used; got != admitted {
			t.Fatalf("call %d: Result.Limits[0].Used = %d, want %d", i, got, admitted)
		}
		if admitted > 100 {
			t.Fatalf("admitted %d units, more than the limit of 100", admitted)
		}
	}
	if model != 100 || admitted != 100 {
		t.Errorf("admitted %d units (model %d), want exactly 100", admitted, model)
	}
	if !sawRefusal {
		t.Error("the sequence never hit the limit; the test proves nothing")
	}
	if u := used(t, l)["only"]; u != 100 {
		t.Errorf("Status used = %d, want 100", u)
	}
}

// testWindowSlides: a full 2 s window refuses, and grants again once the
// entry has left it - exactly at RetryAfter, not before.
func testWindowSlides(t *testing.T, b quota.Backend, cred string) {
	const window = 2 * time.Second
	l := newLimiter(t, oneLimit(cred, 10, window, smallCosts), b)
	first := mustGrant(t, l, "seven")
	res := mustRefuse(t, l, "seven")
	if want := first.At.Add(window).Sub(res.At); res.RetryAfter != want {
		t.Fatalf("RetryAfter = %s, want %s (first entry's time + window - now)", res.RetryAfter, want)
	}
	time.Sleep(res.RetryAfter - 300*time.Millisecond)
	mustRefuse(t, l, "seven") // still inside the window
	time.Sleep(350 * time.Millisecond)
	again := mustGrant(t, l, "seven")
	if again.Limits[0].Used != 7 {
		t.Errorf("after the slide used = %d, want 7 (the old entry left)", again.Limits[0].Used)
	}
}

// testRetryAfterWeighted: entries 3u at t0 and 5u at t1 in a 10-unit limit.
// A 4-unit request must wait for t0+window (3 units leave), a 9-unit request
// for t1+window (all 8 must leave): the oldest entry alone under-states it.
func testRetryAfterWeighted(t *testing.T, b quota.Backend, cred string) {
	const window = 3 * time.Second
	costs := map[string]int64{"c3": 3, "c5": 5, "c4": 4, "c9": 9}
	l := newLimiter(t, oneLimit(cred, 10, window, costs), b)

	before0 := time.Now()
	e0 := mustGrant(t, l, "c3")
	time.Sleep(400 * time.Millisecond)
	before1 := time.Now()
	e1 := mustGrant(t, l, "c5")

	tests := []struct {
		call  string
		entry quota.Result
		local time.Time // our own clock just before that entry was made
	}{
		{"c4", e0, before0},
		{"c9", e1, before1},
	}
	for _, tt := range tests {
		now := time.Now()
		res := mustRefuse(t, l, tt.call)
		// Exact on the backend's own clock...
		if want := tt.entry.At.Add(window).Sub(res.At); res.RetryAfter != want {
			t.Errorf("%s: RetryAfter = %s, want %s (entry at %s + window - now %s)",
				tt.call, res.RetryAfter, want, tt.entry.At.Format(time.StampMicro), res.At.Format(time.StampMicro))
		}
		// ...and close to what our own timestamps say (a sanity check of
		// the clock in use; the exact check is the one above, and a loaded
		// machine delays our own readings by tens of milliseconds).
		within(t, tt.call+" RetryAfter", res.RetryAfter, tt.local.Add(window).Sub(now), 250*time.Millisecond)
		var refused *quota.RefusedError
		if err := func() error { _, err := l.Reserve(context.Background(), tt.call); return err }(); !errors.As(err, &refused) ||
			refused.Limit != "only" {
			t.Errorf("%s: error = %v, want *RefusedError for limit \"only\"", tt.call, err)
		}
	}
	// At RetryAfter the 4-unit request does fit: 3 units have left, 5 remain.
	res := mustRefuse(t, l, "c4")
	time.Sleep(res.RetryAfter + 20*time.Millisecond)
	if got := mustGrant(t, l, "c4"); got.Limits[0].Used != 9 {
		t.Errorf("after the wait used = %d, want 5+4", got.Limits[0].Used)
	}
}

// testPruneOnRefusal: a reservation that prunes expired entries and is then
// refused still leaves the total exact.
func testPruneOnRefusal(t *testing.T, b quota.Backend, cred string) {
	const window = time.Second
	costs := map[string]int64{"c7": 7, "c3": 3, "c8": 8}
	l := newLimiter(t, oneLimit(cred, 10, window, costs), b)
	a := mustGrant(t, l, "c7")
	time.Sleep(300 * time.Millisecond)
	bb := mustGrant(t, l, "c3")
	time.Sleep(time.Until(a.At.Add(window + 50*time.Millisecond)))
	r := mustRefuse(t, l, "c8") // prunes the 7, then 3 + 8 > 10
	if r.Limits[0].Used != 3 || r.RetryAfter != bb.At.Add(window).Sub(r.At) {
		t.Errorf("refusal: used %d, RetryAfter %s; want 3 and %s", r.Limits[0].Used, r.RetryAfter, bb.At.Add(window).Sub(r.At))
	}
	if st := status(t, l); st.Limits[0].Used != 3 || st.Limits[0].Reservations != 1 {
		t.Errorf("status after the refusal = %+v, want used 3 in 1 reservation", st.Limits[0])
	}
	if g := mustGrant(t, l, "c7"); g.Limits[0].Used != 10 {
		t.Errorf("grant after the refusal: used %d, want 10", g.Limits[0].Used)
	}
}

// testRefusalConsumesNothing: a reservation refused by the second limit
// leaves no trace in the first.
func testRefusalConsumesNothing(t *testing.T, b quota.Backend, cred string) {
	cfg := quota.Config{
		Credential: cred,
		Costs:      map[string]int64{"x": 3},
		Limits: []quota.Limit{
			{Name: "large", Units: 100, Window: time.Hour},
			{Name: "small", Units: 5, Window: time.Hour},
		},
		Timeout:      5 * time.Second,
		RebuildGrace: noGrace,
	}
	l := newLimiter(t, cfg, b)
	mustGrant(t, l, "x")
	for range 3 {
		res := mustRefuse(t, l, "x")
		if res.RefusedBy != "small" {
			t.Fatalf("RefusedBy = %q, want small", res.RefusedBy)
		}
		if res.Limits[0].Used != 3 || res.Limits[1].Used != 3 {
			t.Fatalf("after a refusal used = %d/%d, want 3/3", res.Limits[0].Used, res.Limits[1].Used)
		}
	}
	if u := used(t, l); u["large"] != 3 || u["small"] != 3 {
		t.Errorf("Status used = %v, want large 3 small 3", u)
	}
}

// testLargestRetryAfterWins: when several limits refuse, RefusedBy names the
// one that frees up last and RetryAfter is its wait.
func testLargestRetryAfterWins(t *testing.T, b quota.Backend, cred string) {
	cfg := quota.Config{
		Credential: cred,
		Costs:      map[string]int64{"x": 10},
		Limits: []quota.Limit{
			{Name: "long", Units: 10, Window: time.Hour},
			{Name: "short", Units: 10, Window: time.Minute},
		},
		Timeout:      5 * time.Second,
		RebuildGrace: noGrace,
	}
	l := newLimiter(t, cfg, b)
	g := mustGrant(t, l, "x")
	res := mustRefuse(t, l, "x")
	if res.RefusedBy != "long" || res.RetryAfter != g.At.Add(time.Hour).Sub(res.At) {
		t.Errorf("refused by %q after %s, want long after %s", res.RefusedBy, res.RetryAfter, g.At.Add(time.Hour).Sub(res.At))
	}
}

// testUncountedCall: a call absent from a limit's own table neither counts
// against it nor is refused by it.
func testUncountedCall(t *testing.T, b quota.Backend, cred string) {
	cfg := testConfig()
	cfg.Credential = cred
	cfg.Limits[1].Units = 200 // two searches per hour
	l := newLimiter(t, cfg, b)
	mustGrant(t, l, "search.list")
	mustGrant(t, l, "search.list")
	res := mustRefuse(t, l, "search.list")
	if res.RefusedBy != "search" {
		t.Errorf("RefusedBy = %q, want search", res.RefusedBy)
	}
	v := mustGrant(t, l, "videos.list")
	want := []quota.Usage{
		{Name: "daily", Units: 9500, Window: 24 * time.Hour, Cost: 1, Used: 201, Remaining: 9299},
		{Name: "search", Units: 200, Window: time.Hour, Cost: 0, Used: 200, Remaining: 0},
	}
	for i, u := range want {
		if v.Limits[i] != u {
			t.Errorf("Limits[%d] = %+v, want %+v", i, v.Limits[i], u)
		}
	}
	if v.Remaining() != 9299 {
		t.Errorf("Remaining() = %d, want 9299: the search limit does not count videos.list", v.Remaining())
	}
	if v.Cost != 1 || v.Call != "videos.list" {
		t.Errorf("Result call %q cost %d", v.Call, v.Cost)
	}
}

// testManualCost: WithCost charges n against every limit.
func testManualCost(t *testing.T, b quota.Backend, cred string) {
	cfg := testConfig()
	cfg.Credential = cred
	l := newLimiter(t, cfg, b)
	res := mustGrant(t, l, "", quota.WithCost(40))
	if res.Call != "manual" || res.Cost != 40 || res.Limits[0].Used != 40 || res.Limits[1].Used != 40 {
		t.Errorf("manual reservation = %+v", res)
	}
	named := mustGrant(t, l, "videos.list", quota.WithCost(2))
	if named.Call != "videos.list" || named.Limits[0].Used != 42 || named.Limits[1].Used != 42 {
		t.Errorf("named manual reservation = %+v", named)
	}
	if r := mustRefuse(t, l, "", quota.WithCost(1000)); r.RefusedBy != "search" {
		t.Errorf("RefusedBy = %q, want search", r.RefusedBy)
	}
}

// testRelease: released units come back in every limit; unknown IDs are
// ErrNotFound.
func testRelease(t *testing.T, b quota.Backend, cred string) {
	cfg := testConfig()
	cfg.Credential = cred
	l := newLimiter(t, cfg, b)
	ctx := context.Background()
	mustGrant(t, l, "videos.list")
	s := mustGrant(t, l, "search.list", quota.WithID("search-page-2"))
	if u := used(t, l); u["daily"] != 101 || u["search"] != 100 {
		t.Fatalf("used = %v before release", u)
	}
	if err := l.Release(ctx, s.ID); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if u := used(t, l); u["daily"] != 1 || u["search"] != 0 {
		t.Errorf("used = %v after release, want daily 1 search 0", u)
	}
	if err := l.Release(ctx, s.ID); !errors.Is(err, quota.ErrNotFound) {
		t.Errorf("second Release = %v, want ErrNotFound", err)
	}
	if err := l.Release(ctx, "never-granted"); !errors.Is(err, quota.ErrNotFound) {
		t.Errorf("Release(unknown) = %v, want ErrNotFound", err)
	}
	// A generated ID can be released too.
	g := mustGrant(t, l, "channels.list")
	if err := l.Release(ctx, g.ID); err != nil {
		t.Errorf("Release(generated %q): %v", g.ID, err)
	}
	if u := used(t, l); u["daily"] != 1 {
		t.Errorf("used = %v, want daily 1", u)
	}
}

// testIdempotentRetry: the same ID charges once; a refused ID is decided
// afresh.
func testIdempotentRetry(t *testing.T, b quota.Backend, cred string) {
	l := newLimiter(t, oneLimit(cred, 10, time.Hour, smallCosts), b)
	first := mustGrant(t, l, "seven", quota.WithID("req-1"))
	if first.Duplicate || first.ID != "req-1" {
		t.Fatalf("first = %+v", first)
	}
	for range 3 {
		again := mustGrant(t, l, "seven", quota.WithID("req-1"))
		if !again.Duplicate || again.Limits[0].Used != 7 {
			t.Fatalf("retry = %+v, want Duplicate with used 7", again)
		}
	}
	// A retry that would still fit is a duplicate too, not a second charge.
	mustGrant(t, l, "one", quota.WithID("req-small"))
	if again := mustGrant(t, l, "one", quota.WithID("req-small")); !again.Duplicate || again.Limits[0].Used != 8 {
		t.Fatalf("retry with room left = %+v, want Duplicate with used 8", again)
	}
	// req-2 does not fit; its refusal leaves nothing, so after a release it is granted.
	if r := mustRefuse(t, l, "seven", quota.WithID("req-2")); r.Duplicate {
		t.Fatal("a refusal reported Duplicate")
	}
	if err := l.Release(context.Background(), "req-1"); err != nil {
		t.Fatal(err)
	}
	if r := mustGrant(t, l, "seven", quota.WithID("req-2")); r.Duplicate || r.Limits[0].Used != 8 {
		t.Errorf("req-2 after release = %+v, want a fresh grant", r)
	}
}

// testIdempotentRetryAcrossWindows: a retry after the grant has left a short
// window but not a long one is still a duplicate, and charges neither.
func testIdempotentRetryAcrossWindows(t *testing.T, b quota.Backend, cred string) {
	cfg := quota.Config{
		Credential: cred,
		Costs:      map[string]int64{"x": 3},
		Limits: []quota.Limit{
			{Name: "short", Units: 10, Window: time.Second},
			{Name: "long", Units: 100, Window: time.Hour},
		},
		Timeout:      5 * time.Second,
		RebuildGrace: noGrace,
	}
	l := newLimiter(t, cfg, b)
	mustGrant(t, l, "x", quota.WithID("r"))
	time.Sleep(time.Second + 50*time.Millisecond)
	again := mustGrant(t, l, "x", quota.WithID("r"))
	if !again.Duplicate || again.Limits[0].Used != 0 || again.Limits[1].Used != 3 {
		t.Errorf("retry = %+v, want Duplicate with short 0 and long 3", again)
	}
	if u := used(t, l); u["short"] != 0 || u["long"] != 3 {
		t.Errorf("used = %v, want short 0 long 3", u)
	}
	if st := status(t, l); st.Limits[0].Reservations != 0 || st.Limits[1].Reservations != 1 {
		t.Errorf("reservations = %d/%d, want 0/1", st.Limits[0].Reservations, st.Limits[1].Reservations)
	}
}

// testMarkExhausted: an upstream mark refuses everything with RetryAfter =
// until - now, and a later mark is not shortened by an earlier one.
func testMarkExhausted(t *testing.T, b quota.Backend, cred string) {
	cfg := testConfig()
	cfg.Credential = cred
	l := newLimiter(t, cfg, b)
	ctx := context.Background()
	until := time.Now().Add(3 * time.Second).Truncate(time.Microsecond)
	if err := l.MarkExhausted(ctx, until, "quotaExceeded"); err != nil {
		t.Fatal(err)
	}
	for _, call := range []string{"videos.list", "search.list"} {
		now := time.Now()
		res, err := l.Reserve(ctx, call)
		var refused *quota.RefusedError
		if !errors.As(err, &refused) || res.Granted || res.RefusedBy != "upstream" || refused.Limit != "upstream" {
			t.Fatalf("Reserve(%s) = %+v, %v; want refused by upstream", call, res, err)
		}
		if want := until.Sub(res.At); res.RetryAfter != want {
			t.Errorf("RetryAfter = %s, want until - backend now = %s", res.RetryAfter, want)
		}
		within(t, "RetryAfter vs our clock", res.RetryAfter, until.Sub(now), 50*time.Millisecond)
		if !refused.Until.Equal(until) {
			t.Errorf("RefusedError.Until = %s, want %s", refused.Until, until)
		}
	}
	if u := used(t, l); u["daily"] != 0 || u["search"] != 0 {
		t.Errorf("refusals charged: %v", u)
	}
	st := status(t, l)
	if st.Exhausted == nil || !st.Exhausted.Until.Equal(until) || st.Exhausted.Reason != "quotaExceeded" {
		t.Errorf("Status.Exhausted = %+v", st.Exhausted)
	}
	// A shorter mark does not cut the longer one short.
	if err := l.MarkExhausted(ctx, until.Add(-2*time.Second), "shorter"); err != nil {
		t.Fatal(err)
	}
	if st := status(t, l); st.Exhausted == nil || !st.Exhausted.Until.Equal(until) || st.Exhausted.Reason != "quotaExceeded" {
		t.Errorf("after a shorter mark Status.Exhausted = %+v, want the original", st.Exhausted)
	}
	// A mark already over is an error, not a silent no-op.
	if err := l.MarkExhausted(ctx, time.Now().Add(-time.Minute), "late"); err == nil || errors.Is(err, quota.ErrBackend) {
		t.Errorf("MarkExhausted(past) = %v, want a plain error", err)
	}
}

// testMarkExhaustedNextReset: a zero until means the next midnight in Los
// Angeles on the backend's clock.
func testMarkExhaustedNextReset(t *testing.T, b quota.Backend, cred string) {
	cfg := testConfig()
	cfg.Credential = cred
	l := newLimiter(t, cfg, b)
	if err := l.MarkExhausted(context.Background(), time.Time{}, "quotaExceeded"); err != nil {
		t.Fatal(err)
	}
	res := mustRefuse(t, l, "videos.list")
	reset := quota.NextReset(res.At)
	if res.RefusedBy != "upstream" || res.RetryAfter != reset.Sub(res.At) {
		t.Errorf("refused by %q after %s, want upstream after %s (until %s)", res.RefusedBy, res.RetryAfter, reset.Sub(res.At), reset)
	}
	if st := status(t, l); st.Exhausted == nil || !st.Exhausted.Until.Equal(reset) {
		t.Errorf("Status.Exhausted = %+v, want until %s", st.Exhausted, reset)
	}
}

// testMarkExhaustedOneCall: a mark on one call (a bucket of its own at
// Google) refuses only that call; the later of it and a credential-wide mark
// wins.
func testMarkExhaustedOneCall(t *testing.T, b quota.Backend, cred string) {
	cfg := testConfig()
	cfg.Credential = cred
	l := newLimiter(t, cfg, b)
	ctx := context.Background()
	if err := l.MarkExhausted(ctx, time.Now().Add(time.Hour), "x", "serch.list"); !errors.Is(err, quota.ErrUnknownCall) {
		t.Fatalf("MarkExhausted(unknown call) = %v, want ErrUnknownCall", err)
	}
	until := time.Now().Add(10 * time.Second).Truncate(time.Microsecond)
	if err := l.MarkExhausted(ctx, until, "quota limit search", "search.list"); err != nil {
		t.Fatal(err)
	}
	s := mustRefuse(t, l, "search.list")
	if s.RefusedBy != "upstream" || s.RetryAfter != until.Sub(s.At) {
		t.Errorf("search.list refused by %q after %s, want upstream after %s", s.RefusedBy, s.RetryAfter, until.Sub(s.At))
	}
	mustGrant(t, l, "videos.list")
	mustGrant(t, l, "", quota.WithCost(5)) // a manual reservation names no call
	st := status(t, l)
	if st.Exhausted != nil || len(st.ExhaustedCalls) != 1 ||
		st.ExhaustedCalls[0] != (quota.Exhaustion{Until: st.ExhaustedCalls[0].Until, Reason: "quota limit search", Call: "search.list"}) ||
		!st.ExhaustedCalls[0].Until.Equal(until) {
		t.Errorf("status marks = %+v / %+v", st.Exhausted, st.ExhaustedCalls)
	}

	// A shorter credential-wide mark blocks videos.list, while search.list
	// still waits for its own, later mark.
	short := time.Now().Add(5 * time.Second).Truncate(time.Microsecond)
	if err := l.MarkExhausted(ctx, short, "quotaExceeded"); err != nil {
		t.Fatal(err)
	}
	if v := mustRefuse(t, l, "videos.list"); v.RetryAfter != short.Sub(v.At) {
		t.Errorf("videos.list RetryAfter = %s, want %s", v.RetryAfter, short.Sub(v.At))
	}
	if s := mustRefuse(t, l, "search.list"); s.RetryAfter != until.Sub(s.At) {
		t.Errorf("search.list RetryAfter = %s, want the later mark's %s", s.RetryAfter, until.Sub(s.At))
	}
}

// testStatus: the numbers Status reports for an exact sequence.
func testStatus(t *testing.T, b quota.Backend, cred string) {
	cfg := testConfig()
	cfg.Credential = cred
	l := newLimiter(t, cfg, b)
	empty := status(t, l)
	if empty.Credential != cred || empty.Exhausted != nil || len(empty.Limits) != 2 ||
		empty.Limits[0] != (quota.LimitStatus{Name: "daily", Units: 9500, Window: 24 * time.Hour, Remaining: 9500}) {
		t.Fatalf("empty status = %+v", empty)
	}
	first := mustGrant(t, l, "videos.list")
	mustGrant(t, l, "search.list")
	mustGrant(t, l, "videos.list")
	st := status(t, l)
	if st.Backend != "redis" && st.Backend != "ledger" {
		t.Errorf("Backend = %q", st.Backend)
	}
	d, s := st.Limits[0], st.Limits[1]
	if d.Used != 102 || d.Remaining != 9398 || d.Reservations != 3 || d.Window != 24*time.Hour {
		t.Errorf("daily = %+v, want used 102 remaining 9398 reservations 3", d)
	}
	if want := first.At.Add(24 * time.Hour).Sub(st.At); d.NextFree != want {
		t.Errorf("daily NextFree = %s, want %s", d.NextFree, want)
	}
	if s.Used != 100 || s.Remaining != 900 || s.Reservations != 1 || s.NextFree <= 59*time.Minute || s.NextFree > time.Hour {
		t.Errorf("search = %+v", s)
	}
}

// testObserver: every outcome reaches the observer, in order.
func testObserver(t *testing.T, b quota.Backend, cred string) {
	var seen []quota.Result
	l := newLimiter(t, oneLimit(cred, 10, time.Hour, smallCosts), b, quota.WithObserver(func(r quota.Result) { seen = append(seen, r) }))
	mustGrant(t, l, "seven", quota.WithID("a"))
	mustGrant(t, l, "seven", quota.WithID("a"))
	mustRefuse(t, l, "seven")
	_, _ = l.Reserve(context.Background(), "nope") // input error: not an outcome
	if len(seen) != 3 || !seen[0].Granted || !seen[1].Duplicate || seen[2].Granted || seen[2].RefusedBy != "only" {
		t.Errorf("observer saw %+v", seen)
	}
}

// testSharedAcrossLimiters: two Limiters (as in two processes) on one
// credential share one budget and one upstream mark.
func testSharedAcrossLimiters(t *testing.T, b quota.Backend, cred string) {
	a := newLimiter(t, oneLimit(cred, 10, time.Hour, smallCosts), b)
	c := newLimiter(t, oneLimit(cred, 10, time.Hour, smallCosts), b)
	mustGrant(t, a, "seven")
	if r := mustRefuse(t, c, "seven"); r.Limits[0].Used != 7 {
		t.Errorf("second limiter sees used %d, want 7", r.Limits[0].Used)
	}
	if err := a.MarkExhausted(context.Background(), time.Now().Add(time.Minute), "quotaExceeded"); err != nil {
		t.Fatal(err)
	}
	if r := mustRefuse(t, c, "one"); r.RefusedBy != "upstream" {
		t.Errorf("second limiter refused by %q, want upstream", r.RefusedBy)
	}
}
