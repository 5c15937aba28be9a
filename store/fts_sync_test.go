package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ytrend/ytrend/regions"
	"github.com/ytrend/ytrend/search"
	"github.com/ytrend/ytrend/store"
)

// syncWords is a small vocabulary, so that words recur across videos and a
// stale index entry would show up as a wrong match. It mixes accents,
// Devanagari and Japanese.
var syncWords = strings.Fields(`apple banana cherry delta echo foxtrot golf hotel india juliet kilo lima
	mike novembre oscar papa québec romeo sierra tango uniforme victor whiskey xray yankee zulu café naïve
	क्रिकेट मैच समाचार 東京 天気 ニュース`)

func randomText(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = syncWords[r.IntN(len(syncWords))]
	}
	return strings.Join(ws, " ")
}

func randomVideo(r *rand.Rand, id string) store.Video {
	v := store.Video{ID: id, Title: randomText(r, 2+r.IntN(5)), Description: randomText(r, r.IntN(12)),
		ChannelID: "ch" + fmt.Sprint(r.IntN(5)), ChannelTitle: randomText(r, 1+r.IntN(2)), Views: i64(int64(r.IntN(1000)))}
	for range r.IntN(4) {
		v.Tags = append(v.Tags, randomText(r, 1+r.IntN(2)))
	}
	return v
}

// The index must match the videos table after any sequence of inserts,
// re-seen videos with changed and unchanged text, and deletes: FTS5's
// integrity-check passes, and for every vocabulary word the set of videos
// MATCH finds is exactly the set whose current text contains it.
func TestFTSStaysInSync(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			db, _ := openDB(t)
			r := rand.New(rand.NewPCG(seed, 99))
			model := map[string]store.Video{} // what the archive should hold
			regionsOf := map[string]map[regions.Code]bool{}
			nextID := 0
			at := t0
			runs := map[regions.Code]int64{}
			rank := 1
			var ops [4]int
			for step := 0; step < 60; step++ {
				at = at.Add(time.Minute)
				if r.IntN(8) == 0 && len(model) > 0 { // delete a few
					var del []string
					for id := range model {
						if r.IntN(3) == 0 {
							del = append(del, id)
						}
					}
					n, err := db.DeleteVideos(ctx, del...)
					if err != nil || n != len(del) {
						t.Fatalf("delete %d: %d %v", len(del), n, err)
					}
					for _, id := range del {
						delete(model, id)
						delete(regionsOf, id)
					}
					ops[3] += len(del)
					continue
				}
				var page []store.Video
				seen := map[string]bool{}
				for range 1 + r.IntN(12) {
					var v store.Video
					switch k := r.IntN(10); {
					case k < 4 || len(model) == 0: // new
						v = randomVideo(r, fmt.Sprint("v", nextID))
						nextID++
						ops[0]++
					case k < 7: // re-seen, unchanged text
						v = pick(r, model)
						v.Views = i64(*v.Views + 1)
						ops[1]++
					default: // re-seen, some indexed field changed
						v = pick(r, model)
						switch r.IntN(5) {
						case 4:
							v.ChannelID = "ch" + fmt.Sprint(r.IntN(5))
						case 0:
							v.Title = randomText(r, 3)
						case 1:
							v.Description = randomText(r, 5)
						case 2:
							v.Tags = []string{randomText(r, 2)}
						case 3:
							v.ChannelTitle = randomText(r, 1)
						}
						ops[2]++
					}
					if seen[v.ID] {
						continue
					}
					seen[v.ID] = true
					page = append(page, v)
				}
				region := []regions.Code{"US", "DE", "JP"}[r.IntN(3)]
				if runs[region] == 0 {
					runs[region] = startRun(t, db, region, t0)
				}
				savePage(t, db, store.Page{RunID: runs[region], Region: region, FetchedAt: at, Kind: store.PageChart, FirstRank: rank, Videos: page})
				rank += len(page)
				for _, v := range page {
					model[v.ID] = v
					if regionsOf[v.ID] == nil {
						regionsOf[v.ID] = map[regions.Code]bool{}
					}
					regionsOf[v.ID][region] = true
				}
				if step%10 == 0 {
					ftsIntegrity(t, db)
				}
			}
			ftsIntegrity(t, db)
			checkIndexMatchesModel(t, db, model)
			checkFiltersMatchModel(t, db, model, regionsOf)
			t.Logf("ops: %d new, %d unchanged, %d changed, %d deleted; %d videos", ops[0], ops[1], ops[2], ops[3], len(model))
		})
	}
}

func pick(r *rand.Rand, m map[string]store.Video) store.Video {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return m[keys[r.IntN(len(keys))]]
}

func checkIndexMatchesModel(t *testing.T, db *store.DB, model map[string]store.Video) {
	t.Helper()
	ctx := context.Background()
	for _, w := range syncWords {
		term := search.Tokens(w)[0]
		var want []string
		for id, v := range model {
			text := strings.Join([]string{v.Title, v.Description, v.ChannelTitle, strings.Join(v.Tags, " ")}, " ")
			if slices.Contains(search.Tokens(text), term) {
				want = append(want, id)
			}
		}
		rows, err := db.Reader().QueryContext(ctx, `SELECT v.video_id FROM video_fts JOIN videos v ON v.id = -video_fts.rowid
			WHERE video_fts MATCH ?`, `"`+term+`"`)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var id string
			rows.Scan(&id)
			got = append(got, id)
		}
		rows.Close()
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("MATCH %q finds %v, the table holds it in %v", term, got, want)
		}
	}
	// Every video is findable by its own first title word, and the rows and
	// the index agree on the count.
	var videos, indexed int
	db.Reader().QueryRow(`SELECT (SELECT count(*) FROM videos), (SELECT count(*) FROM video_fts_docsize)`).Scan(&videos, &indexed)
	if videos != len(model) || indexed != len(model) {
		t.Errorf("%d videos, %d indexed documents, model has %d", videos, indexed, len(model))
	}
}

// checkFiltersMatchModel: the region and channel facets in the index agree
// with where each video trended and its current channel.
func checkFiltersMatchModel(t *testing.T, db *store.DB, model map[string]store.Video, regionsOf map[string]map[regions.Code]bool) {
	t.Helper()
	for _, w := range []string{"apple", "zulu", "café"} {
		term := search.Tokens(w)[0]
		for _, f := range []struct {
			q    store.Query
			keep func(id string, v store.Video) bool
		}{
			{store.Query{Regions: []regions.Code{"DE"}}, func(id string, _ store.Video) bool { return regionsOf[id]["DE"] }},
			{store.Query{Regions: []regions.Code{"US", "JP"}}, func(id string, _ store.Video) bool { return regionsOf[id]["US"] || regionsOf[id]["JP"] }},
			{store.Query{Channel: "ch3"}, func(_ string, v store.Video) bool { return v.ChannelID == "ch3" }},
		} {
			var want []string
			for id, v := range model {
				text := strings.Join([]string{v.Title, v.Description, v.ChannelTitle, strings.Join(v.Tags, " ")}, " ")
				if slices.Contains(search.Tokens(text), term) && f.keep(id, v) {
					want = append(want, id)
				}
			}
			q := f.q
			q.Text, q.Limit = w, store.MaxLimit
			got := ids(find(t, db, q))
			sort.Strings(want)
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("%q with %+v: %v, want %v", w, f.q, got, want)
			}
		}
	}
}

// indexState fingerprints the FTS index's storage: any write to the index
// changes its structure record or its data blocks.
func indexState(tb testing.TB, db *store.DB) string {
	tb.Helper()
	var n int
	var size int64
	var structure []byte
	err := db.Reader().QueryRow(`SELECT count(*), sum(length(block)), (SELECT block FROM video_fts_data WHERE id = 10) FROM video_fts_data`).
		Scan(&n, &size, &structure)
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%d blocks, %d bytes, structure %x", n, size, structure)
}

// A re-seen page whose text did not change must not touch the index: no
// index statement runs (the store's counter) and the index's storage is
// byte-for-byte the same (FTS5's structure record and data blocks), while
// the statistics are updated.
func TestUnchangedPageDoesNotTouchIndex(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	var page []store.Video
	for i := 0; i < 50; i++ {
		page = append(page, sampleVideo(fmt.Sprint("u", i)))
	}
	saveChart(t, db, "US", t0, 1, page...)
	before, writes := indexState(t, db), store.FTSWrites(db)

	for i := range page {
		page[i].Views = i64(*page[i].Views * 2)
	}
	// The hourly re-fetch of the same chart.
	res := saveChart(t, db, "US", t0.Add(time.Hour), 1, page...)
	if res != (store.PageResult{Unchanged: 50}) {
		t.Fatalf("re-seen page: %+v", res)
	}
	if after := indexState(t, db); after != before {
		t.Errorf("index storage changed by an unchanged page:\nbefore %s\nafter  %s", before, after)
	}
	if n := store.FTSWrites(db) - writes; n != 0 {
		t.Errorf("%d index writes for an unchanged page", n)
	}
	v, st, err := db.Video(ctx, "u7")
	if err != nil || *v.Views != 2000 || len(st.Regions) != 1 || st.Regions[0].Snapshots != 2 {
		t.Errorf("statistics not updated: views %v regions %+v %v", v.Views, st.Regions, err)
	}

	// First trending in another region adds a region facet: the text is
	// unchanged (so the page reports it so), the index entry is rewritten.
	res = saveChart(t, db, "DE", t0.Add(2*time.Hour), 1, page...)
	if res != (store.PageResult{Unchanged: 50}) {
		t.Fatalf("re-seen page in a new region: %+v", res)
	}
	if n := store.FTSWrites(db) - writes; n != 2 {
		t.Errorf("%d index writes for a new region, want 2 (delete old, insert new)", n)
	}
	if hits := find(t, db, store.Query{Text: "title", Regions: []regions.Code{"DE"}, Limit: 100}); len(hits) != 50 {
		t.Errorf("region filter after the new region: %d hits", len(hits))
	}
	ftsIntegrity(t, db)
	before, writes = indexState(t, db), store.FTSWrites(db)

	// The control: one changed title does write the index.
	page[3].Title = "Completely different"
	if res := saveChart(t, db, "US", t0.Add(3*time.Hour), 1, page...); res.Updated != 1 || res.Unchanged != 49 {
		t.Fatalf("page with one change: %+v", res)
	}
	if after := indexState(t, db); after == before {
		t.Error("index storage unchanged after a title change")
	}
	if n := store.FTSWrites(db) - writes; n != 2 {
		t.Errorf("%d index writes for one changed video, want 2 (delete old, insert new)", n)
	}
	ftsIntegrity(t, db)
	hits, _ := db.Search(ctx, store.Query{Text: "completely different"})
	if !slices.Equal(ids(hits), []string{"u3"}) {
		t.Errorf("changed title not found: %v", ids(hits))
	}
	if hits, _ := db.Search(ctx, store.Query{Text: `"title of u3"`}); len(hits) != 0 {
		t.Errorf("old title still found: %v", ids(hits))
	}
}

// A page's new videos are indexed as one FTS5 segment: the index is fed in
// ascending rowid order (FTS5 starts a new segment whenever a rowid goes
// down), and in one statement.
func TestPageWritesOneSegment(t *testing.T) {
	db, _ := openDB(t)
	var page []store.Video
	for i := 0; i < 50; i++ {
		page = append(page, sampleVideo(fmt.Sprint("seg", i)))
	}
	saveChart(t, db, "US", t0, 1, page...)
	if n := segments(t, db); n != 1 {
		t.Errorf("%d segments after one page, want 1", n)
	}
	// Re-indexing all 50 (a new region) writes two: the removals, which must
	// run before the rows change, and the additions.
	saveChart(t, db, "DE", t0.Add(time.Hour), 1, page...)
	if n := segments(t, db); n != 3 {
		t.Errorf("%d segments after a re-indexed page, want 3", n)
	}
}
