package replication_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
	"github.com/ytrend/ytrend/replication"
	"github.com/ytrend/ytrend/store"
	"github.com/ytrend/ytrend/testkit/archivetest"
	"github.com/ytrend/ytrend/testkit/synth"
)

var gen = synth.New(synth.Config{Seed: 7})

// saveCharts stores n chart pages of 50 new videos each, from video from.
func saveCharts(tb testing.TB, db *store.DB, from, n int) {
	tb.Helper()
	for p := 0; p < n; p++ {
		vs := make([]store.Video, 50)
		for i := range vs {
			vs[i] = gen.Video(from + p*50 + i)
		}
		archivetest.SaveChart(tb, db, "US", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(from+p)*time.Minute), 1, vs...)
	}
}

func videos(tb testing.TB, path string) int {
	tb.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	defer db.Close()
	archivetest.Integrity(tb, db)
	var n int
	if err := db.Writer().QueryRowContext(context.Background(), `SELECT count(*) FROM videos`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func opts() replication.Options {
	return replication.Options{SyncInterval: 100 * time.Millisecond, SnapshotInterval: time.Hour, Retention: 24 * time.Hour}
}

func fileURL(tb testing.TB) string { return "file://" + filepath.Join(tb.TempDir(), "replica") }

func start(tb testing.TB, path string, urls []string, token int64) *replication.Stream {
	tb.Helper()
	s, err := replication.Start(context.Background(), path, urls, token, opts())
	if err != nil {
		tb.Fatalf("start term %d: %v", token, err)
	}
	tb.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

func TestStreamThenRestoreFile(t *testing.T) {
	ctx := context.Background()
	db, path := archivetest.Open(t)
	url := fileURL(t)
	s := start(t, path, []string{url}, 7)
	saveCharts(t, db, 0, 3)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "restored.db")
	r, err := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Generation != "term-0000000000000000007" {
		t.Errorf("restored from %s, want term-0000000000000000007", r.Generation)
	}
	if got := videos(t, out); got != 150 {
		t.Errorf("restored archive holds %d videos, want 150", got)
	}
	st := s.Status()
	if len(st) != 1 || st[0].Position != st[0].LocalPosition || st[0].LagSeconds != 0 || st[0].LastSync.IsZero() {
		t.Errorf("status after a sync: %+v", st)
	}
	// A restore never overwrites an archive.
	if _, err := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{}); !errors.Is(err, replication.ErrExists) {
		t.Errorf("restore over an archive: %v, want ErrExists", err)
	}
}

func TestRestoreAtTimeBetweenTwoFetches(t *testing.T) {
	ctx := context.Background()
	db, path := archivetest.Open(t)
	url := fileURL(t)
	s := start(t, path, []string{url}, 1)
	saveCharts(t, db, 0, 1)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	between := time.Now()
	for !time.Now().After(between.Add(time.Millisecond)) { // LTX timestamps are in milliseconds
		time.Sleep(time.Millisecond)
	}
	saveCharts(t, db, 1000, 2)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   time.Time
		want int
	}{{between, 50}, {time.Time{}, 150}} {
		out := filepath.Join(t.TempDir(), "restored.db")
		if _, err := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{At: tc.at}); err != nil {
			t.Fatalf("restore at %v: %v", tc.at, err)
		}
		if got := videos(t, out); got != tc.want {
			t.Errorf("restore at %v: %d videos, want %d", tc.at, got, tc.want)
		}
	}
}

// TestRestoreWritesWhatLitestreamWould: the restore writes the copy itself
// (write.go) rather than through Litestream's Restore; from a term of a
// snapshot, a compaction and changes after it (pages changed, added and,
// by a VACUUM, removed), both must give the same bytes.
func TestRestoreWritesWhatLitestreamWould(t *testing.T) {
	ctx := context.Background()
	db, path := archivetest.Open(t)
	url := fileURL(t)
	s := start(t, path, []string{url}, 1)
	saveCharts(t, db, 0, 4)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for i, q := range []string{`DELETE FROM video_fts`, `VACUUM`} {
		saveCharts(t, db, 1000*(i+1), 2)
		if _, err := db.Writer().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s.Stop(ctx)
	dir := t.TempDir()
	ours, theirs := filepath.Join(dir, "ours.db"), filepath.Join(dir, "theirs.db")
	if err := replication.RestoreTermCopy(ctx, url, 1, ours); err != nil {
		t.Fatal(err)
	}
	c, err := replication.OpenTerm(ctx, url, 1)
	if err != nil {
		t.Fatal(err)
	}
	ro := litestream.NewRestoreOptions()
	ro.OutputPath = theirs
	if err := litestream.NewReplicaWithClient(nil, c).Restore(ctx, ro); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(ours)
	b, _ := os.ReadFile(theirs)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the copies differ: %d and %d bytes", len(a), len(b))
	}
}

func TestRestoreFromABadReplicaNamesItAndTouchesNothing(t *testing.T) {
	ctx := context.Background()
	missing := "file://" + filepath.Join(t.TempDir(), "never-written")
	const gen = "term-0000000000000000003"
	for _, tc := range []struct {
		name string
		url  string
		want []string
	}{
		{"missing", missing, []string{"never-written", "no term"}},
		{"empty", damaged(t, gen, func([]byte) []byte { return nil }), []string{"replica", gen}},
		{"truncated", damaged(t, gen, func(b []byte) []byte { return b[:len(b)/2] }), []string{"replica", gen}},
		{"corrupt", damaged(t, gen, func(b []byte) []byte {
			for i := 100; i < len(b)-16; i += 97 {
				b[i] ^= 0xff
			}
			return b
		}), []string{"replica", "generation " + gen}},
		// Every LTX file intact (its checksums match), the database in
		// it damaged: the check of the restored copy must refuse it.
		{"damaged pages", damagedTable(t, gen, "videos"), []string{"replica", "generation " + gen, "integrity"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "restored.db")
			_, err := replication.Restore(ctx, []string{tc.url}, out, replication.RestoreOptions{})
			if err == nil {
				t.Fatal("restored")
			}
			for _, w := range append(tc.want, filepath.Base(strings.TrimPrefix(tc.url, "file://"))) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
				t.Errorf("left %d files beside the output", len(entries))
			}
		})
	}
}

// damaged is a file replica holding one term (gen, token 3) of two pages,
// every LTX file of which was passed through damage (nil: removed).
func damaged(tb testing.TB, gen string, damage func([]byte) []byte) string {
	tb.Helper()
	return damagedFrom(tb, gen, func(*store.DB) func([]byte) []byte { return damage })
}

// damagedTable is a file replica like damaged's whose LTX files are intact
// (their checksums match) but hold the pages of table's b-tree damaged:
// damage that Litestream's own checks of its files cannot see, in pages
// that nothing but a check of the whole restored copy reads.
func damagedTable(tb testing.TB, gen, table string) string {
	tb.Helper()
	return damagedFrom(tb, gen, func(db *store.DB) func([]byte) []byte {
		pages := map[uint32]bool{}
		rows, err := db.Writer().Query(`SELECT pageno FROM dbstat WHERE name = ?`, table)
		if err != nil {
			tb.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n uint32
			rows.Scan(&n)
			pages[n] = true
		}
		if len(pages) == 0 {
			tb.Fatalf("no page of %s", table)
		}
		return reencoded(func(pgno uint32, page []byte) {
			if pages[pgno] {
				page[0] = 0x77 // no b-tree page type
			}
		})
	})
}

// damagedFrom is damaged with a damage chosen once the archive is written.
func damagedFrom(tb testing.TB, gen string, damageOf func(*store.DB) func([]byte) []byte) string {
	tb.Helper()
	ctx := context.Background()
	db, path := archivetest.Open(tb)
	url := fileURL(tb)
	s := start(tb, path, []string{url}, 3)
	saveCharts(tb, db, 0, 2)
	if err := s.Sync(ctx); err != nil {
		tb.Fatal(err)
	}
	s.Stop(ctx)
	damage := damageOf(db)
	n := 0
	filepath.WalkDir(filepath.Join(strings.TrimPrefix(url, "file://"), gen), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".ltx") {
			data, _ := os.ReadFile(p)
			if data = damage(data); data == nil {
				os.Remove(p)
			} else {
				os.WriteFile(p, data, 0o644)
			}
			n++
		}
		return nil
	})
	if n == 0 {
		tb.Fatal("no LTX file to damage")
	}
	return url
}

// reencoded damages the database pages an LTX file holds and writes the
// file again with valid checksums: damage that Litestream's own checks of
// its files cannot see.
func reencoded(damage func(pgno uint32, page []byte)) func([]byte) []byte {
	return func(b []byte) []byte {
		dec := ltx.NewDecoder(bytes.NewReader(b))
		if err := dec.DecodeHeader(); err != nil {
			panic(err)
		}
		var out bytes.Buffer
		enc, err := ltx.NewEncoder(&out)
		if err != nil {
			panic(err)
		}
		if err := enc.EncodeHeader(dec.Header()); err != nil {
			panic(err)
		}
		page := make([]byte, dec.Header().PageSize)
		for {
			var hdr ltx.PageHeader
			if err := dec.DecodePage(&hdr, page); err == io.EOF {
				break
			} else if err != nil {
				panic(err)
			}
			damage(hdr.Pgno, page)
			if err := enc.EncodePage(hdr, page); err != nil {
				panic(err)
			}
		}
		if err := dec.Close(); err != nil {
			panic(err)
		}
		enc.SetPostApplyChecksum(dec.Trailer().PostApplyChecksum)
		if err := enc.Close(); err != nil {
			panic(err)
		}
		return out.Bytes()
	}
}

// TestDeposedTermWritesNothingToTheNext: a leader whose term ended keeps
// writing its archive (a page in flight), but nothing reaches any term's
// replica path: its stream stopped with its term, and the next term writes
// only below its own token.
func TestDeposedTermWritesNothingToTheNext(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	dir := strings.TrimPrefix(url, "file://")

	old, oldPath := archivetest.Open(t)
	var leading atomic.Bool
	leading.Store(true)
	o := opts()
	o.Leading = leading.Load
	first, err := replication.Start(ctx, oldPath, []string{url}, 1, o)
	if err != nil {
		t.Fatal(err)
	}
	saveCharts(t, old, 0, 1)
	if err := first.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// The term ends by the leader's own clock (a pause past its lease); its
	// stream is not stopped yet, and the leader stores pages in flight.
	leading.Store(false)
	before := listing(t, dir)
	saveCharts(t, old, 50, 1)
	if err := first.Sync(ctx); !errors.Is(err, replication.ErrTermEnded) {
		t.Errorf("a sync after the term ended: %v, want ErrTermEnded", err)
	}
	first.Stop(ctx)

	next, nextPath := archivetest.Open(t)
	second := start(t, nextPath, []string{url}, 2)
	saveCharts(t, next, 5000, 1)
	saveCharts(t, old, 100, 2) // the deposed leader wakes and stores pages
	if err := second.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	after := listing(t, dir)
	for p, size := range before {
		if after[p] != size {
			t.Errorf("%s changed after its term ended: %d -> %d bytes", p, size, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok && !strings.Contains(p, "term-0000000000000000002") && !strings.HasPrefix(p, "ltx/") {
			t.Errorf("%s written after term 1 ended, outside term 2", p)
		}
	}
	out := filepath.Join(t.TempDir(), "restored.db")
	if _, err := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := videos(t, out); got != 50 {
		t.Errorf("the newest term restores %d videos, want the new leader's 50", got)
	}
}

func listing(tb testing.TB, dir string) map[string]int64 {
	tb.Helper()
	out := map[string]int64{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			rel, _ := filepath.Rel(dir, p)
			out[rel] = fi.Size()
		}
		return nil
	})
	if len(out) == 0 {
		tb.Fatalf("nothing in %s", dir)
	}
	return out
}

// TestTakeoverAdoptsThePreviousTerm: the new leader's archive, restored
// from the previous term and copied into its open archive, holds every page
// the old one replicated, and passes SQLite's and FTS5's checks.
func TestTakeoverAdoptsThePreviousTerm(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	old, oldPath := archivetest.Open(t)
	first := start(t, oldPath, []string{url}, 4)
	saveCharts(t, old, 0, 3)
	grant(t, old, "g-old")
	grant(t, old, "g-both")
	if err := first.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	standby, _ := archivetest.Open(t)
	saveCharts(t, standby, 9000, 1) // what a standby had of its own
	grant(t, standby, "g-standby")
	grant(t, standby, "g-both")
	if _, ok, err := replication.Takeover(ctx, []string{url}, 5, standby, replication.TakeoverOptions{}); err != nil || !ok {
		t.Fatalf("takeover: adopted %v, %v", ok, err)
	}
	// The budget's records of grants are the union: none forgotten, none twice.
	grants := archivetest.Grants(t, standby)
	if want := []string{"g-both", "g-old", "g-standby"}; !slices.Equal(grants, want) {
		t.Errorf("quota_grants after takeover %v, want %v", grants, want)
	}
	// The standby registered when it stored its page; it still is, so its
	// sweep never takes its own runs in flight for abandoned ones.
	var mine int
	if err := standby.Reader().QueryRowContext(ctx, `SELECT count(*) FROM instances WHERE id = ?`, standby.Instance()).Scan(&mine); err != nil || mine != 1 {
		t.Errorf("the standby's row in instances after takeover: %d (%v), want 1", mine, err)
	}
	archivetest.Integrity(t, standby)
	saveCharts(t, standby, 20000, 1) // the new leader fetches on
	var n int
	if err := standby.Reader().QueryRowContext(ctx, `SELECT count(*) FROM videos`).Scan(&n); err != nil || n != 200 {
		t.Errorf("after takeover and one more page: %d videos (%v), want 150 + 50", n, err)
	}
	archivetest.Integrity(t, standby)

	// The old archive streams term 4 again (its own: a restart); another
	// archive cannot claim it, whatever the fence token says.
	first.Stop(ctx)
	again := start(t, oldPath, []string{url}, 4)
	again.Stop(ctx)
	if _, err := replication.Start(ctx, filepath.Join(t.TempDir(), "other.db"), []string{url}, 4, opts()); !errors.Is(err, replication.ErrTermTaken) {
		t.Errorf("another archive streaming term 4: %v, want ErrTermTaken", err)
	}
}

// TestRestoredLeaseContinuesPastEveryTerm: the embedded ledger's lease in
// a restored archive hands out no fence token a term already used.
func TestRestoredLeaseContinuesPastEveryTerm(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	db, path := archivetest.Open(t)
	if _, err := db.Writer().ExecContext(ctx, `INSERT INTO quota_lease VALUES ('c', 'h', 3, 0)`); err != nil {
		t.Fatal(err)
	}
	s := start(t, path, []string{url}, 3)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	s.Stop(ctx)
	start(t, filepath.Join(t.TempDir(), "later.db"), []string{url}, 9).Stop(ctx) // a later term, empty
	out := filepath.Join(t.TempDir(), "restored.db")
	if _, err := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := store.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var holder string
	var token int64
	if err := r.Reader().QueryRowContext(ctx, `SELECT holder, token FROM quota_lease`).Scan(&holder, &token); err != nil || token != 9 || holder != "" {
		t.Errorf("restored lease: holder %q token %d (%v), want released at 9", holder, token, err)
	}
}

func grant(tb testing.TB, db *store.DB, id string) {
	tb.Helper()
	if _, err := db.Writer().ExecContext(context.Background(),
		`INSERT INTO quota_grants (credential, id, call, costs, at, epoch) VALUES ('c', ?, 'videos.list', '{"daily":1}', 1, '')`, id); err != nil {
		tb.Fatal(err)
	}
}

// TestEndedTermsArePrunedAfterTheRetention: a term's start deletes the
// terms that ended more than the retention ago (files and index marker),
// and keeps the one that just ended.
func TestEndedTermsArePrunedAfterTheRetention(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	dir := strings.TrimPrefix(url, "file://")
	db, path := archivetest.Open(t)
	o := opts()
	o.Retention = 50 * time.Millisecond
	for token := int64(1); token <= 3; token++ {
		if token == 3 { // term 1 ended when term 2 started: wait out the retention since
			ts, err := replication.Terms(ctx, url)
			if err != nil || len(ts) != 2 {
				t.Fatalf("terms %v, %v", ts, err)
			}
			for time.Since(ts[0].Started) <= o.Retention {
				time.Sleep(10 * time.Millisecond)
			}
		}
		s, err := replication.Start(ctx, path, []string{url}, token, o)
		if err != nil {
			t.Fatal(err)
		}
		saveCharts(t, db, int(token)*1000, 1)
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		s.Stop(ctx)
	}
	ts, err := replication.Terms(ctx, url)
	if err != nil || len(ts) != 2 || ts[0].Token != 3 || ts[1].Token != 2 {
		t.Errorf("terms after the third started: %v, %v; want 3 and 2 (1 pruned)", ts, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "term-0000000000000000001")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("term 1's files: %v, want pruned", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "term-0000000000000000002")); err != nil {
		t.Errorf("term 2's files, ended just now: %v, want kept", err)
	}
	out := filepath.Join(t.TempDir(), "restored.db")
	if _, err := replication.Restore(ctx, []string{url}, out, replication.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := videos(t, out); got != 150 {
		t.Errorf("restored %d videos, want 150", got)
	}
}

// TestStartRefusesNoRetention: Start itself refuses a retention of 0 or
// less (config does too, but the library is called directly as well): it
// would prune the term that just ended, the one a takeover or a restore
// needs. Nothing on the replica or beside the archive is touched.
func TestStartRefusesNoRetention(t *testing.T) {
	ctx := context.Background()
	url := fileURL(t)
	dir := strings.TrimPrefix(url, "file://")
	db, path := archivetest.Open(t)
	s := start(t, path, []string{url}, 1)
	saveCharts(t, db, 0, 1)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	s.Stop(ctx)
	for _, r := range []time.Duration{0, -time.Hour} {
		o := opts()
		o.Retention = r
		s, err := replication.Start(ctx, path, []string{url}, 2, o)
		if err == nil {
			s.Stop(ctx)
		}
		if want := fmt.Sprintf("replica: Options.Retention %s: must be positive", r); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Retention %s: %v, want an error starting %q", r, err, want)
		}
	}
	ts, err := replication.Terms(ctx, url)
	if err != nil || len(ts) != 1 || ts[0].Token != 1 {
		t.Errorf("terms %v, %v; want term 1 alone (no term 2 claimed)", ts, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "term-0000000000000000001")); err != nil {
		t.Errorf("term 1's files: %v, want kept", err)
	}
}
