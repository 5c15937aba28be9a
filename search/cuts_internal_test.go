package search

import (
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"testing"
)

// video_cuts' triggers, as any writer of video_stats fires them, keep
// entries that a match's test can only pass where its values would: a
// match whose values reach the cuts (and the page, by rankState.keep's test)
// is never dropped by its bounds. The bounds are also tight enough to drop
// most of those whose values do not.
func TestCutBoundsHoldTheirValues(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const hour = int64(3600e6)
	type values struct {
		seen  int64
		best  sql.NullInt64
		views sql.NullInt64
	}
	random := func() values {
		var v values
		switch rng.IntN(6) {
		case 0:
			v.seen = rng.Int64N(1000) * hour // on the hour
		case 1:
			v.seen = rng.Int64N(1000)*hour + 1 // just past it
		case 2:
			v.seen = -rng.Int64N(1e12)
		default:
			v.seen = 1.7e15 + rng.Int64N(1e12)
		}
		if rng.IntN(4) > 0 {
			v.best = sql.NullInt64{Int64: 1 + rng.Int64N(400), Valid: true}
		}
		if rng.IntN(5) > 0 {
			n := []int64{0, 1, 15, 16, 255, 256, -5, math.MaxInt64, rng.Int64N(1e6), rng.Int64N(1e13)}[rng.IntN(10)]
			v.views = sql.NullInt64{Int64: n, Valid: true}
		}
		return v
	}
	const n = 3000
	want := map[int64]values{}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= n; id++ {
		v := random()
		if _, err := tx.ExecContext(ctx, `INSERT INTO video_stats (video, channel, last_seen, best_rank, views, doc_len, terms, text_hash, meta_hash)
			VALUES (?, 1, ?, ?, ?, 1, x'', 0, 0)`, id, v.seen, v.best, v.views); err != nil {
			t.Fatal(err)
		}
		want[id] = v
	}
	// Re-sightings and corrections: every column, both ways, NULL and back.
	for range 4000 {
		id := 1 + rng.Int64N(n)
		if _, ok := want[id]; !ok {
			continue
		}
		v := random()
		if _, err := tx.ExecContext(ctx, `UPDATE video_stats SET last_seen = ?, best_rank = ?, views = ? WHERE video = ?`,
			v.seen, v.best, v.views, id); err != nil {
			t.Fatal(err)
		}
		want[id] = v
	}
	for range 300 {
		id := 1 + rng.Int64N(n)
		if _, err := tx.ExecContext(ctx, `DELETE FROM video_stats WHERE video = ?`, id); err != nil {
			t.Fatal(err)
		}
		delete(want, id)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	parts := map[int64][]byte{}
	rows, err := db.QueryContext(ctx, `SELECT part, cuts FROM video_cuts`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p int64
		var b []byte
		if err := rows.Scan(&p, &b); err != nil {
			t.Fatal(err)
		}
		parts[p] = b
	}
	rows.Close()

	var held, dropped, droppedByValues int
	for id := int64(1); id <= n; id++ {
		row := parts[id>>cutsPartShift]
		if len(row) != cutsPerPart*cutEntry {
			t.Fatalf("video %d: part of %d bytes", id, len(row))
		}
		v, ok := want[id]
		if !ok {
			if e := string(row[(id&(cutsPerPart-1))*cutEntry:][:cutEntry]); e != "0000000000" {
				t.Errorf("deleted video %d: entry %q", id, e)
			}
			continue
		}
		for range 20 {
			// Cuts near the video's own values, so that both sides are tried.
			c := noCuts
			var since int64
			if rng.IntN(2) == 0 {
				c.seen = v.seen + rng.Int64N(4*hour) - 2*hour
			}
			if rng.IntN(4) == 0 {
				since = v.seen + rng.Int64N(4*hour) - 2*hour
			}
			if rng.IntN(2) == 0 {
				c.rank = v.best.Int64 + rng.Int64N(5) - 2
				if !v.best.Valid {
					c.rank = 200 + rng.Int64N(100)
				}
			}
			if rng.IntN(2) == 0 && v.views.Valid && v.views.Int64 >= 0 && v.views.Int64 < math.MaxInt64/4 {
				c.views = max(-1, v.views.Int64+rng.Int64N(2*v.views.Int64+3)-v.views.Int64-1)
			}
			best := int64(1073741824)
			if v.best.Valid {
				best = v.best.Int64
			}
			views := int64(-1)
			if v.views.Valid {
				views = v.views.Int64
			}
			reach := v.seen >= c.seen && v.seen >= since && views >= c.views && best <= c.rank
			ct := &cutTest{first: id >> cutsPartShift, parts: [][]byte{row}, c: c, since: since}
			pass := ct.pass(&rankState{}, id)
			switch {
			case reach && !pass:
				t.Fatalf("video %d %+v, cuts %+v since %d: dropped by its bounds", id, v, c, since)
			case reach:
				held++
			case !pass:
				dropped++
				droppedByValues++
			default:
				droppedByValues++
			}
		}
	}
	t.Logf("%d tests reached the cuts and passed; %d of %d that did not were dropped by the bounds", held, dropped, droppedByValues)
	if held == 0 || dropped*2 < droppedByValues {
		t.Errorf("bounds too loose to test: %d of %d dropped", dropped, droppedByValues)
	}
}

// mayPlace on bounds (a later sighting, a better rank, more views) holds
// wherever keep's test holds on the values, in every order.
func TestMayPlaceHoldsForBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const newest = int64(1.7e15)
	for range 20000 {
		rs := &rankState{prune: true, limit: 1, newest: newest, textMax: 0.5 + 10*rng.Float64(),
			order: []SortOrder{SortRelevance, SortRecent, SortViews}[rng.IntN(3)]}
		seen := newest - rng.Int64N(60*24*3600e6)
		best := rng.IntN(300)
		views := rng.Int64N(1e9) - 1
		var key float64
		switch rs.order {
		case SortRecent:
			key = float64(seen)
		case SortViews:
			key = float64(views)
		default:
			key = rs.textMax * boost(seen, newest, best)
		}
		rs.kept = keyHeap{key * (0.9 + 0.2*rng.Float64())}
		probe := *rs
		probe.kept = keyHeap{rs.kept[0]}
		if !probe.keep(seen, best, views) {
			continue
		}
		bSeen := seen + rng.Int64N(3600e6)
		bBest := best
		if best > 1 {
			bBest = best - rng.IntN(best)
		}
		bViews := views + rng.Int64N(1e6)
		if !rs.mayPlace(bSeen, bBest, bViews) {
			t.Fatalf("order %v, floor %v: keep holds for (%d, %d, %d), mayPlace not for bounds (%d, %d, %d)",
				rs.order, rs.kept[0], seen, best, views, bSeen, bBest, bViews)
		}
	}
}

// An entry the triggers did not write (another program's bytes, a row
// cut short) bounds nothing: its match is tested on its values instead.
func TestCutEntriesNotFromTheTriggersDropNothing(t *testing.T) {
	strict := cuts{seen: math.MaxInt64, views: math.MaxInt64, rank: -1} // nothing reaches these
	rs := &rankState{prune: true, limit: 1, kept: keyHeap{math.Inf(1)}, textMax: 1}
	good := "0000010001" // a sighting at hour 1, rank 0, views hidden
	for _, e := range []string{
		"00000G0001", "00000100A1", "000001000 ", "000001000\xff", "00000100\x0001"[:10],
		"0000010g01", "ABCDEF0101", "zzzzzzzzzz", "000001", "",
	} {
		ct := &cutTest{parts: [][]byte{[]byte(e)}, c: strict}
		if !ct.pass(rs, 0) {
			t.Errorf("entry %q: dropped", e)
		}
	}
	// The same cuts drop a valid entry, so the cases above test the check.
	row := []byte(good)
	if (&cutTest{parts: [][]byte{row}, c: strict}).pass(rs, 0) {
		t.Fatalf("valid entry %q passed cuts nothing reaches", good)
	}
}
