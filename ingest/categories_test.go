package ingest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ytrend/ytrend/ingest"
	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// movableClock is the fetcher's clock, which a test moves to another day.
type movableClock struct {
	mu sync.Mutex
	d  time.Duration
}

func (c *movableClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.d)
}

func (c *movableClock) add(d time.Duration) {
	c.mu.Lock()
	c.d += d
	c.mu.Unlock()
}

func (e *env) categoryCalls() int64 {
	e.t.Helper()
	return e.sim.Usage(testKey).Calls["videoCategories.list"]
}

// The first fetch of a region in a quota day asks videoCategories.list (one
// unit, reserved like the pages); later fetches that day use the cached
// names; the next Pacific day asks again.
func TestCategoryNamesOncePerRegionPerQuotaDay(t *testing.T) {
	t.Parallel()
	clock := &movableClock{}
	e := newEnv(t, envOpts{categories: true, fetch: ingest.Options{Now: clock.now}})
	ctx := context.Background()

	rep := e.fetch("US", 2)
	if rep.Status != store.StatusOK || rep.Pages != 2 || rep.Units != 3 || rep.Categories != 32 || rep.CategoriesErr != nil {
		t.Fatalf("first US fetch: %+v (err %v), want ok, 2 pages, 3 units, 32 categories", rep, rep.Err)
	}
	if n := e.categoryCalls(); n != 1 || e.used("daily") != 3 || e.sim.Usage(testKey).Charged != 3 {
		t.Errorf("after the first fetch: %d category calls, ledger %d, simulator charged %d; want 1, 3, 3",
			n, e.used("daily"), e.sim.Usage(testKey).Charged)
	}
	cats, err := e.db.Categories(ctx, "US")
	if err != nil || len(cats) != 32 {
		t.Fatalf("cached %d categories, %v", len(cats), err)
	}
	if c := cats[2]; c.ID != "10" || c.Title != "Music" || c.Assignable == nil || !*c.Assignable {
		t.Errorf("category 10: %+v", c)
	}
	chart, err := e.db.Chart(ctx, "US", time.Time{}, 0)
	if err != nil || len(chart.Entries) != 100 {
		t.Fatalf("chart: %d entries, %v", len(chart.Entries), err)
	}
	for _, en := range chart.Entries {
		if en.Category == "" || en.CategoryID == "" {
			t.Fatalf("entry %d (%s) has category %q named %q", en.Rank, en.VideoID, en.CategoryID, en.Category)
		}
	}

	if rep := e.fetch("US", 2); rep.Status != store.StatusOK || rep.Units != 2 || rep.Categories != 0 {
		t.Errorf("second US fetch the same day: %+v, want 2 units, no categories asked", rep)
	}
	if rep := e.fetch("DE", 2); rep.Status != store.StatusOK || rep.Units != 3 || rep.Categories != 32 {
		t.Errorf("first DE fetch: %+v, want 3 units (another region asks for its own names)", rep)
	}
	if n := e.categoryCalls(); n != 2 || e.used("daily") != 8 {
		t.Errorf("%d category calls, ledger %d; want 2 and 8", n, e.used("daily"))
	}

	// The next quota day (midnight Pacific): asked again.
	now := clock.now()
	clock.add(quota.NextReset(now).Sub(now) + time.Minute)
	if rep := e.fetch("US", 2); rep.Status != store.StatusOK || rep.Units != 3 || rep.Categories != 32 {
		t.Errorf("US fetch the next day: %+v, want 3 units", rep)
	}
	if n := e.categoryCalls(); n != 3 {
		t.Errorf("%d category calls, want 3", n)
	}
	if at, _ := e.db.CategoriesFetchedAt(ctx, "US"); at.Before(quota.NextReset(now)) {
		t.Errorf("US names fetched at %v, before the day that asked again", at)
	}
}

// A budget that refuses the category call does not stop the chart: the
// chart is stored, the names stay as they were (here a day old), and the
// refused call reached nobody.
func TestRefusedCategoryReservationKeepsTheChart(t *testing.T) {
	t.Parallel()
	qc := quota.DefaultConfig()
	qc.Limits = append(qc.Limits, quota.Limit{Name: "categories", Units: 1, Window: 24 * time.Hour,
		Costs: map[string]int64{"videoCategories.list": 1}})
	e := newEnv(t, envOpts{categories: true, quota: &qc})
	ctx := context.Background()
	yes := true
	yesterday := quota.NextReset(time.Now()).Add(-36 * time.Hour)
	if err := e.db.SaveCategories(ctx, "US", yesterday, []store.Category{{ID: "10", Title: "Music", Assignable: &yes}}); err != nil {
		t.Fatal(err)
	}
	// Someone spent the categories limit already.
	if _, err := e.limiter.Reserve(ctx, "videoCategories.list"); err != nil {
		t.Fatal(err)
	}

	rep := e.fetch("US", 2)
	if rep.Status != store.StatusOK || rep.Pages != 2 || rep.Videos != 100 || rep.Units != 2 || rep.Categories != 0 {
		t.Fatalf("%+v (err %v), want ok, 2 pages, 100 videos, 2 units", rep, rep.Err)
	}
	if rep.CategoriesErr == nil || !strings.Contains(rep.CategoriesErr.Error(), "refused by categories") {
		t.Errorf("categories error %v, want a refusal by the categories limit", rep.CategoriesErr)
	}
	if n := e.categoryCalls(); n != 0 || e.sim.Usage(testKey).Charged != 2 {
		t.Errorf("%d category calls reached the simulator, %d units charged; want 0 and 2", n, e.sim.Usage(testKey).Charged)
	}
	if !strings.Contains(e.logs.String(), "category names not refreshed") {
		t.Errorf("no warning logged:\n%s", e.logs.String())
	}
	cats, _ := e.db.Categories(ctx, "US")
	if len(cats) != 1 || !cats[0].FetchedAt.Equal(yesterday) {
		t.Errorf("cached names %+v, want yesterday's one", cats)
	}
	chart, err := e.db.Chart(ctx, "US", time.Time{}, 0)
	if err != nil || len(chart.Entries) != 100 {
		t.Fatalf("chart: %d entries, %v", len(chart.Entries), err)
	}
	for _, en := range chart.Entries {
		if want := map[bool]string{true: "Music", false: ""}[en.CategoryID == "10"]; en.Category != want {
			t.Errorf("entry %d in category %s named %q, want %q", en.Rank, en.CategoryID, en.Category, want)
		}
	}
}

// An upstream failure of the category call (it reached the server, so its
// unit is spent) does not stop the chart either.
func TestFailedCategoryCallKeepsTheChart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{categories: true, handler: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/videoCategories") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				w.Write([]byte(`{"error": {"code": 403, "message": "Access Not Configured.", "errors": [{"message": "Access Not Configured.", "domain": "usageLimits", "reason": "accessNotConfigured"}]}}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	}})
	rep := e.fetch(regions.Code("GB").String(), 3)
	if rep.Status != store.StatusOK || rep.Pages != 3 || rep.Units != 4 || rep.CategoriesErr == nil ||
		!strings.Contains(rep.CategoriesErr.Error(), "accessNotConfigured") {
		t.Fatalf("%+v (err %v, categories %v), want ok, 3 pages, 4 units", rep, rep.Err, rep.CategoriesErr)
	}
	if cats, _ := e.db.Categories(context.Background(), "GB"); len(cats) != 0 {
		t.Errorf("cached %d names", len(cats))
	}
}

// A cost table without videoCategories.list spends nothing on names, and
// says so only at debug level.
func TestUnpricedCategoriesAreNotFetched(t *testing.T) {
	t.Parallel()
	qc := quota.DefaultConfig()
	delete(qc.Costs, "videoCategories.list")
	e := newEnv(t, envOpts{categories: true, quota: &qc})
	rep := e.fetch("US", 1)
	if rep.Status != store.StatusOK || rep.Units != 1 || !errors.Is(rep.CategoriesErr, quota.ErrUnknownCall) || e.categoryCalls() != 0 {
		t.Fatalf("%+v (err %v, categories %v)", rep, rep.Err, rep.CategoriesErr)
	}
	if strings.Contains(e.logs.String(), "level=WARN") {
		t.Errorf("warned:\n%s", e.logs.String())
	}
}
