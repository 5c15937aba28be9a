package search

import (
	"database/sql/driver"
	"fmt"
	"math"

	"modernc.org/sqlite"
)

// A match's cut test without its video_stats row.
//
// Once a walk's page is full, a match places only if its last sighting,
// best rank or view count reaches the page's cuts (searcher.cuts). SQLite
// tests those on the match's video_stats row, and seeking that row is about
// a third of a search's CPU, for matches most of which fail. video_cuts
// (migration 0014, kept by triggers on video_stats) packs bounds of the same
// three values for 256 videos in a row: the walk reads the rows of the range
// it ranks once, and ytrend_pass tests each match on its bounds before the
// join seeks the row. A bound is never tighter than its value, so a match
// that fails on its bounds fails on its values, and the page is unchanged.

// cutsPerPart is the number of videos in a video_cuts row; cutEntry the
// length of one video's entry in it.
const (
	cutsPartShift = 8 // migration 0014 says ">> 8"
	cutsPerPart   = 1 << cutsPartShift
	cutEntry      = 10
)

// cutsMinPerBlock is the fewest matches a block must hold, by the query's
// estimate, for a walk to read the block's video_cuts rows (4 rows, 10 KB):
// below it, reading them costs more than the seeks their test spares. A
// word with 3 matches a block, with --since, took 34 ms of CPU with them
// and 8 without at 1M; the mixed query set costs the same with any
// threshold from 0 to 32 (callgrind).
const cutsMinPerBlock = 16

// cutTest is what ytrend_pass tests a walk's matches with: the rows of
// video_cuts covering the range ranked (parts[i] is part first+i; nil if
// the archive has no such row), and the cuts and since bound of the range's
// query.
type cutTest struct {
	first int64
	parts [][]byte
	c     cuts
	since int64

	tested, dropped int // for WalkProbe.Tested
}

// pass reports whether video id can reach the cuts, and then the page
// that rs holds so far (rankState.keep's test, which tightens as the range's
// query scores its matches), by its bounds; true when the bounds are
// unknown.
func (t *cutTest) pass(rs *rankState, id int64) bool {
	seen, rank, views, ok := t.bounds(id)
	if !ok {
		return true
	}
	return t.reach(seen, rank, views) && rs.mayPlace(seen, int(rank), views)
}

// bounds decodes video id's entry: its last sighting (math.MaxInt64 for
// "never before the end of time", which the triggers write for a sighting
// past 2^24 hours), best rank (255 for none or past 255) and views (-1:
// hidden) bounds; false if the entry is missing or not written by
// migration 0014's triggers.
func (t *cutTest) bounds(id int64) (seen, rank, views int64, ok bool) {
	p := id>>cutsPartShift - t.first
	if p < 0 || p >= int64(len(t.parts)) {
		return 0, 0, 0, false
	}
	row := t.parts[p]
	at := int(id&(cutsPerPart-1)) * cutEntry
	if len(row) < at+cutEntry {
		return 0, 0, 0, false
	}
	e := row[at : at+cutEntry : at+cutEntry]
	var bad byte // a digit's high bits: hexDigits marks what is no digit
	for _, c := range e[:6] {
		d := hexDigits[c]
		bad |= d
		seen = seen<<4 | int64(d&15)
	}
	r0, r1, vl, vf := hexDigits[e[6]], hexDigits[e[7]], hexDigits[e[8]], hexDigits[e[9]]
	if bad|r0|r1|vl|vf > 15 {
		return 0, 0, 0, false
	}
	rank = int64(r0)<<4 | int64(r1)
	vlen, vfirst := int64(vl), int64(vf)
	if seen == 0xffffff {
		seen = math.MaxInt64
	} else {
		seen *= 3600e6
	}
	views = -1 // hidden
	switch {
	case vlen == 15:
		views = math.MaxInt64
	case vlen > 0:
		views = (vfirst+1)<<(4*(vlen-1)) - 1
	}
	return seen, rank, views, true
}

// reach reports whether bounds reach the range's cuts and since.
func (t *cutTest) reach(seen, rank, views int64) bool {
	return seen >= t.c.seen && seen >= t.since && rank <= t.c.rank && views >= t.c.views
}

// hexDigits maps a lower-case hex digit to its value, anything else to
// 0xff.
var hexDigits = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	return t
}()

const sqlCutParts = `SELECT part, cuts FROM video_cuts WHERE part BETWEEN ?1 AND ?2`

// loadCuts reads the video_cuts rows covering rowids [lo, hi] (ids -hi to
// -lo) into a test with cuts c.
func (s searcher) loadCuts(lo, hi int64, c cuts, since int64) (*cutTest, error) {
	t := &cutTest{first: (-hi) >> cutsPartShift, c: c, since: since}
	last := (-lo) >> cutsPartShift
	t.parts = make([][]byte, last-t.first+1)
	rows, err := s.stmt(sqlCutParts).QueryContext(s.ctx, t.first, last)
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var part int64
		var b []byte
		if err := rows.Scan(&part, &b); err != nil {
			return nil, fmt.Errorf("store: search: %w", err)
		}
		if i := part - t.first; i >= 0 && i < int64(len(t.parts)) {
			t.parts[i] = b
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	return t, nil
}

// ytrend_pass(state, rowid) is 0 for a match of a walk's range whose
// bounds cannot reach the range's cuts (cutTest.pass), 1 otherwise.
func init() {
	sqlite.MustRegisterFunction("ytrend_pass", &sqlite.FunctionImpl{
		NArgs:  2,
		Scalar: passFunc,
	})
}

func passFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	rs := rankStateOf(args[0])
	if rs == nil || rs.cutTest == nil {
		return int64(1), nil
	}
	t := rs.cutTest
	rowid, _ := args[1].(int64)
	t.tested++
	if t.pass(rs, -rowid) {
		return int64(1), nil
	}
	t.dropped++
	return int64(0), nil
}
