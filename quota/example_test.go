package quota_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ytrend/ytrend/quota"
	"github.com/ytrend/ytrend/store"
)

func ExampleNextReset() {
	// Google's daily quota resets at midnight in Los Angeles, DST included.
	for _, s := range []string{
		"2026-01-15T20:00:00Z", // an ordinary winter day (PST)
		"2026-03-08T09:00:00Z", // 01:00 PST on the night clocks spring forward
		"2026-11-01T07:30:00Z", // 00:30 PDT on the night clocks fall back
	} {
		t, _ := time.Parse(time.RFC3339, s)
		reset := quota.NextReset(t)
		fmt.Printf("%s -> %s (in %s)\n", t.Format(time.RFC3339), reset.UTC().Format(time.RFC3339), reset.Sub(t))
	}
	// Output:
	// 2026-01-15T20:00:00Z -> 2026-01-16T08:00:00Z (in 12h0m0s)
	// 2026-03-08T09:00:00Z -> 2026-03-09T07:00:00Z (in 22h0m0s)
	// 2026-11-01T07:30:00Z -> 2026-11-02T08:00:00Z (in 24h30m0s)
}

func ExampleLimiter_Reserve() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "quota-example")
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, filepath.Join(dir, "archive.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	// The default budget, with a clock we control so the numbers are exact.
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	ledger := quota.NewSQLite(db.Writer(), quota.WithClock(func() time.Time { return now }))
	l, err := quota.New(quota.DefaultConfig(), ledger)
	if err != nil {
		fmt.Println(err)
		return
	}

	for i := 1; i <= 11; i++ {
		res, err := l.Reserve(ctx, "search.list")
		var refused *quota.RefusedError
		switch {
		case errors.As(err, &refused):
			fmt.Printf("search %d: refused by %q, retry after %s\n", i, refused.Limit, refused.RetryAfter)
		case err != nil:
			fmt.Println(err)
			return
		case i == 1 || i == 10:
			fmt.Printf("search %d: granted, %d units left for searches\n", i, res.Remaining())
		}
		now = now.Add(time.Minute)
	}
	res, _ := l.Reserve(ctx, "videos.list")
	fmt.Printf("videos.list: granted=%v, daily used %d of %d\n", res.Granted, res.Limits[0].Used, res.Limits[0].Units)
	// Output:
	// search 1: granted, 900 units left for searches
	// search 10: granted, 0 units left for searches
	// search 11: refused by "search", retry after 50m0s
	// videos.list: granted=true, daily used 1001 of 9500
}

func ExampleConfig_Validate() {
	cfg := quota.DefaultConfig()
	cfg.Limits[1].Costs = map[string]int64{"serch.list": 100}
	fmt.Println(cfg.Validate())
	// Output:
	// quota: invalid config: limits[1].costs: unknown call "serch.list" (not in costs: channels.list, i18nRegions.list, search.list, videoCategories.list, videos.list)
}

func ExampleLimiter_MarkExhausted() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "quota-example")
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, filepath.Join(dir, "archive.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	// 01:00 in Los Angeles on the night clocks spring forward.
	now := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	ledger := quota.NewSQLite(db.Writer(), quota.WithClock(func() time.Time { return now }))
	l, _ := quota.New(quota.DefaultConfig(), ledger)

	// Google answered quotaExceeded: refuse everything until its reset.
	if err := l.MarkExhausted(ctx, time.Time{}, "quotaExceeded from videos.list"); err != nil {
		fmt.Println(err)
		return
	}
	res, err := l.Reserve(ctx, "videos.list")
	fmt.Println(res.RefusedBy, res.RetryAfter, errors.Is(err, quota.ErrRefused))
	fmt.Println(err)
	// Output:
	// upstream 22h0m0s true
	// quota: refused: upstream quota exhausted until 2026-03-09T07:00:00Z: retry after 22h
}
