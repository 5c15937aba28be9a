package dataset_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/dataset"
	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/store"
)

// Import stores a file's charts and counts them: the 2017 fixture's two
// days (8 positions), then nothing new the second time.
func TestImportCountsChartsAndRows(t *testing.T) {
	db := openDB(t)
	for _, want := range []dataset.Imported{
		{Charts: 2, Rows: 8, NewVideos: 6, Region: "US", Ended: true},
		{AlreadyThere: 2, Region: "US", Ended: true},
	} {
		r, err := dataset.NewReader(strings.NewReader(file2017(rows2017)), "USvideos.csv", "US")
		if err != nil {
			t.Fatal(err)
		}
		var told int
		got, err := dataset.Import(context.Background(), nil, r, db, func(rows int) { told += rows })
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("imported %+v, want %+v", got, want)
		}
		if told != 8 {
			t.Errorf("progress told %d positions, want 8 (every position read)", told)
		}
	}
}

// A stop that has come already stores nothing more and says so.
func TestImportStopped(t *testing.T) {
	db := openDB(t)
	r, err := dataset.NewReader(strings.NewReader(file2017(rows2017)), "USvideos.csv", "US")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	close(stop)
	got, err := dataset.Import(context.Background(), stop, r, db, nil)
	if !errors.Is(err, dataset.ErrStopped) || got != (dataset.Imported{}) {
		t.Errorf("Import after the stop: %+v, %v; want nothing and ErrStopped", got, err)
	}
}

// shiftDays returns rows2020 with each trending_date moved by the day's
// offset in shift (keyed by the date as written).
func shiftDays(shift map[string]string) [][]string {
	out := make([][]string, len(rows2020))
	for i, r := range rows2020 {
		r = slices.Clone(r)
		r[6] = shift[r[6]]
		out[i] = r
	}
	return out
}

// Several files are stored earliest chart first across them: the runs
// interleave by date, and a video first listed in the second file's
// earlier chart is that file's new video, not the first file's.
func TestImportAllInterleavesFilesByDate(t *testing.T) {
	db := openDB(t)
	jp := file2020(t, columns2020, rows2020, style{}) // 08-12 (4 videos), 08-13 (3C66 again, kXLn new)
	us := file2020(t, columns2020, shiftDays(map[string]string{
		"2020-08-12T00:00:00Z": "2020-08-11T00:00:00Z",
		"2020-08-13T00:00:00Z": "2020-08-14T00:00:00Z",
	}), style{})
	var readers []*dataset.Reader
	for _, f := range []struct {
		name, body string
		region     regions.Code
	}{{"JP_youtube_trending_data.csv", jp, "JP"}, {"US_youtube_trending_data.csv", us, "US"}} {
		r, err := dataset.NewReader(strings.NewReader(f.body), f.name, f.region)
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, r)
	}
	var told int
	got, err := dataset.ImportAll(context.Background(), nil, readers, db, func(rows int) { told += rows })
	if err != nil {
		t.Fatal(err)
	}
	want := []dataset.Imported{
		// JP's 08-12 chart holds the four videos US listed on 08-11, and
		// its 08-13 chart the one video nobody listed before.
		{Charts: 2, Rows: 6, NewVideos: 1, Region: "JP", Ended: true},
		{Charts: 2, Rows: 6, NewVideos: 4, Region: "US", Ended: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("imported %+v, want %+v", got, want)
	}
	if told != 12 {
		t.Errorf("progress told %d positions, want 12", told)
	}
	runs, err := db.Runs(context.Background(), store.RunFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(runs) // oldest id first
	var order []string
	for _, r := range runs {
		order = append(order, string(r.Region)+" "+r.StartedAt.Format(time.DateOnly))
	}
	wantOrder := []string{"US 2020-08-11", "JP 2020-08-12", "JP 2020-08-13", "US 2020-08-14"}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("runs stored in the order %q, want %q", order, wantOrder)
	}
}

// failAfter reads body, then fails instead of ending.
type failAfter struct{ r io.Reader }

var errDiskGone = errors.New("disk gone")

func (f failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errDiskGone
	}
	return n, err
}

// A file that cannot be read further stops the whole import with an error
// naming its place, and every chart read before it is stored: importing
// again stores only what is missing.
func TestImportAllStopsAtAFileThatFails(t *testing.T) {
	db := openDB(t)
	good := file2020(t, columns2020, rows2020, style{})
	// The failing file's first day is complete, and the first row of its
	// next day tells the reader so; then the read fails.
	cut := file2020(t, columns2020, shiftDays(map[string]string{
		"2020-08-12T00:00:00Z": "2020-08-11T00:00:00Z",
		"2020-08-13T00:00:00Z": "2020-08-14T00:00:00Z",
	})[:5], style{})
	jp, err := dataset.NewReader(strings.NewReader(good), "JP_youtube_trending_data.csv", "JP")
	if err != nil {
		t.Fatal(err)
	}
	us, err := dataset.NewReader(failAfter{strings.NewReader(cut)}, "US_youtube_trending_data.csv", "US")
	if err != nil {
		t.Fatal(err)
	}
	got, err := dataset.ImportAll(context.Background(), nil, []*dataset.Reader{jp, us}, db, nil)
	var re *dataset.ReadError
	if !errors.As(err, &re) || re.Index != 1 || !errors.Is(err, errDiskGone) {
		t.Fatalf("ImportAll: %v; want a ReadError of file 1 wrapping %v", err, errDiskGone)
	}
	if got[0].Ended || got[1].Ended {
		t.Errorf("files read to their end: %v, %v; want neither", got[0].Ended, got[1].Ended)
	}
	stored := got[0].Charts + got[1].Charts
	runs, err := db.Runs(context.Background(), store.RunFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if stored == 0 || len(runs) != stored {
		t.Fatalf("%d charts counted, %d runs in the archive; want the same, and some", stored, len(runs))
	}
	// Again, whole: only what is missing is stored.
	jp, _ = dataset.NewReader(strings.NewReader(good), "JP_youtube_trending_data.csv", "JP")
	usWhole := file2020(t, columns2020, shiftDays(map[string]string{
		"2020-08-12T00:00:00Z": "2020-08-11T00:00:00Z",
		"2020-08-13T00:00:00Z": "2020-08-14T00:00:00Z",
	}), style{})
	us, _ = dataset.NewReader(strings.NewReader(usWhole), "US_youtube_trending_data.csv", "US")
	again, err := dataset.ImportAll(context.Background(), nil, []*dataset.Reader{jp, us}, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := again[0].Charts + again[1].Charts + stored; n != 4 || again[0].AlreadyThere+again[1].AlreadyThere != stored {
		t.Errorf("second import stored %+v after %d: want the 4 charts in all, none twice", again, stored)
	}
}

// chartSizes lists the archive's runs as "region date: positions", oldest
// first.
func chartSizes(t *testing.T, db *store.DB) []string {
	t.Helper()
	runs, err := db.Runs(context.Background(), store.RunFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(runs)
	var out []string
	for _, r := range runs {
		out = append(out, fmt.Sprintf("%s %s: %d", r.Region, r.StartedAt.Format(time.DateOnly), r.Videos))
	}
	return out
}

// A file whose read fails in the middle of a day has not given that day
// whole: the import must not store the rows read of it as the day's chart.
// Stored, the day would be "already in the archive" for every later import,
// and the rows after the failure would never be stored; importing the
// whole file again must leave the archive with every day complete.
func TestImportAllStoresNoDayCutByAReadError(t *testing.T) {
	db := openDB(t)
	jp := file2020(t, columns2020, rows2020, style{})
	// US: the same days a day earlier; its read fails after the first two
	// of 08-11's four rows (both records whole).
	usRows := shiftDays(map[string]string{
		"2020-08-12T00:00:00Z": "2020-08-11T00:00:00Z",
		"2020-08-13T00:00:00Z": "2020-08-12T00:00:00Z",
	})
	usWhole := file2020(t, columns2020, usRows, style{})
	usCut := file2020(t, columns2020, usRows[:2], style{})
	readers := func(us io.Reader) []*dataset.Reader {
		t.Helper()
		var rs []*dataset.Reader
		for _, f := range []struct {
			name   string
			r      io.Reader
			region regions.Code
		}{{"JP_youtube_trending_data.csv", strings.NewReader(jp), "JP"}, {"US_youtube_trending_data.csv", us, "US"}} {
			r, err := dataset.NewReader(f.r, f.name, f.region)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
		}
		return rs
	}
	got, err := dataset.ImportAll(context.Background(), nil, readers(failAfter{strings.NewReader(usCut)}), db, nil)
	if !errors.Is(err, errDiskGone) {
		t.Fatalf("ImportAll of the failing file: %v; want %v", err, errDiskGone)
	}
	if got[1].Charts != 0 || got[1].Rows != 0 {
		t.Errorf("the failing file's import stored %d charts (%d positions) of a day it could not read whole; want none: %q",
			got[1].Charts, got[1].Rows, chartSizes(t, db))
	}
	if _, err := dataset.ImportAll(context.Background(), nil, readers(strings.NewReader(usWhole)), db, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"US 2020-08-11: 4", "JP 2020-08-12: 4", "US 2020-08-12: 2", "JP 2020-08-13: 2"}
	if got := chartSizes(t, db); !slices.Equal(got, want) {
		t.Errorf("after importing the whole files again, the archive holds %q; want %q", got, want)
	}
}

// failOnce fails the first read that meets the end, then reads on: a read
// error that does not repeat (a network file system's hiccup).
type failOnce struct {
	r      io.Reader
	failed bool
}

func (f *failOnce) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) && !f.failed {
		f.failed = true
		return n, errDiskGone
	}
	return n, err
}

// An export in JSON lines whose read fails once, in the middle of a run:
// the failure stops the import, and the run it cut is not stored.
func TestImportJSONLinesStopsAtAReadError(t *testing.T) {
	src := openDB(t)
	if n, _, _ := importFile(t, src, "JP_youtube_trending_data.csv", file2020(t, columns2020, rows2020, style{}), "JP"); n != 2 {
		t.Fatalf("%d charts imported, want 2", n)
	}
	lines := strings.SplitAfter(export(t, src, true, store.SnapshotFilter{}), "\n")
	// The first run's four rows and the second's first of two.
	cut := strings.Join(lines[:5], "")
	r, err := dataset.NewReader(&failOnce{r: strings.NewReader(cut)}, "backup.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	got, err := dataset.Import(context.Background(), nil, r, db, nil)
	if !errors.Is(err, errDiskGone) {
		t.Errorf("Import: %+v, %v; want the read error %v", got, err, errDiskGone)
	}
	if want := []string{"JP 2020-08-12: 4"}; !slices.Equal(chartSizes(t, db), want) {
		t.Errorf("the archive holds %q; want %q", chartSizes(t, db), want)
	}
}
