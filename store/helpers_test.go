package store_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
)

// t0 is the fixtures' clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openDB(tb testing.TB, opts ...store.Option) (*store.DB, string) {
	tb.Helper()
	return archivetest.Open(tb, opts...)
}

func startRun(tb testing.TB, db *store.DB, region regions.Code, at time.Time) int64 {
	tb.Helper()
	id, err := db.StartRun(context.Background(), region, store.TriggerSchedule, at)
	if err != nil {
		tb.Fatalf("start run %s: %v", region, err)
	}
	return id
}

func savePage(tb testing.TB, db *store.DB, p store.Page) store.PageResult {
	tb.Helper()
	res, err := db.SavePage(context.Background(), p)
	if err != nil {
		tb.Fatalf("save page: %v", err)
	}
	return res
}

// saveChart saves videos as one chart page of a new run in region at time at
// and finishes the run.
func saveChart(tb testing.TB, db *store.DB, region regions.Code, at time.Time, firstRank int, vs ...store.Video) store.PageResult {
	tb.Helper()
	return archivetest.SaveChart(tb, db, region, at, firstRank, vs...)
}

func i64(n int64) *int64 { return &n }

// ftsIntegrity runs FTS5's own check of the index against the videos table
// and SQLite's check of the whole file.
func ftsIntegrity(tb testing.TB, db *store.DB) {
	tb.Helper()
	archivetest.Integrity(tb, db)
}

func ids(hits []store.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.VideoID
	}
	return out
}

// osMkdirTemp makes a directory for state that outlives a single test (the
// fuzz fixture); it is removed when the test binary exits via TestMain.
func osMkdirTemp() (string, error) {
	dir, err := os.MkdirTemp("", "ytrend-store-fuzz-")
	if err == nil {
		tempDirs = append(tempDirs, dir)
	}
	return dir, err
}

var tempDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	if fuzzDB != nil {
		fuzzDB.Close()
	}
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// startOldRun inserts a running run as binaries before 0005_instances did
// (owner host:pid, no instance row), for archives at an older schema.
func startOldRun(tb testing.TB, db *store.DB, region regions.Code, trigger store.Trigger, at time.Time) int64 {
	tb.Helper()
	host, _ := os.Hostname()
	var id int64
	err := db.Writer().QueryRowContext(context.Background(),
		`INSERT INTO runs (region, triggered_by, owner, started_at) VALUES (?, ?, ?, ?) RETURNING id`,
		string(region), string(trigger), host+":"+strconv.Itoa(os.Getpid()), at.UnixMicro()).Scan(&id)
	if err != nil {
		tb.Fatalf("start old run %s: %v", region, err)
	}
	return id
}
