package search

import (
	"cmp"
	"database/sql"
	"fmt"
	"math"
	"slices"
)

// Exact ranking with an early stop.
//
// The ids of the archive are cut into blocks of 1<<blockShift consecutive
// ids, and video_blocks (migration 0008, kept by triggers on video_stats)
// holds for each block the newest sighting, the best chart rank and the most
// views of any of its videos. Those bound what any match in the block can
// score:
//
//	relevance: text ≤ Σ_p idf(p)·(k1+1)   (BM25 saturates as tf grows)
//	           boost ≤ boost(block's newest sighting, block's best rank)
//	recent:    last sighting ≤ block's newest sighting
//	views:     views ≤ block's most views
//
// A search reads the blocks in the order of the bound that falls fastest —
// newest sighting first (views: most views first) — and ranks their matches
// a group of blocks at a time, keeping the best page so far. It skips a block
// whose bound cannot beat that page's last entry, and stops once no block
// still unread can (for relevance: one as fresh as the block in hand and
// charted at rank 1). The page is then exactly what ranking every match
// would give, ties included, because the walk keeps every candidate the full
// order (sqlCandidates' ORDER BY, mirrored by searcher.before) could place.
// Once the page is full, each match of a range is first tested on its
// video_cuts bounds (cuts.go), which spares most of them the seek of their
// statistics.
//
// The first group holds about walkFirst matches by the query's estimated
// document frequency, and each next group twice as many blocks as the last,
// so a query whose matches are few or spread out costs a dozen range queries
// rather than one per block, and a common word stops early.
const blockShift = 10 // 1,024 ids per block; migration 0008 says ">> 10"

// walkFirst is how many matches the first group of blocks should hold.
const walkFirst = 128

// block is a video_blocks row.
type block struct {
	id       int64
	maxSeen  int64
	minRank  sql.NullInt64
	maxViews int64 // -1: every count hidden
}

// boundSlack covers rounding: a bound is compared with scores computed in a
// different order of floating-point operations.
const boundSlack = 1 + 1e-9

// walkProbe: a query with fewer matches than this (filters that are facets
// of the MATCH included) is ranked in one pass; a walk would not save work.
const walkProbe = 1024

// viewsWalkWorth decides whether a walk in views order beats ranking all n
// matches in one pass. Such a walk ranks every block holding any video with
// more views than the page's last entry, the limit-th most viewed of the
// matches; if views are unrelated to the words, that is a block of b videos
// with chance 1 − (1 − limit/n)^b ≈ 1 − e^(−limit·b/n). The blocks come in
// an order unrelated to their ids, so each costs a range query of its own,
// about as much as ranking a thousand matches in one pass (measured at a
// million videos). A common word walks a few dozen blocks; a word in a few
// percent of the videos would walk hundreds, and is ranked in one pass.
func viewsWalkWorth(n float64, limit int, nBlocks int64) bool {
	const blockCost = 1000 // in matches ranked in one pass
	blocks := float64(nBlocks) * -math.Expm1(-float64(limit)*(1<<blockShift)/max(n, 1))
	return blocks*blockCost < n
}

// viewsWalkFrom is the fewest matches (at least walkProbe) for which
// viewsWalkWorth holds, or videos+1 if it never does: worth grows with n
// (more matches, fewer blocks to walk for a page).
func viewsWalkFrom(limit int, nBlocks, videos int64) int {
	lo, hi := int64(walkProbe), max(videos+1, walkProbe)
	if !viewsWalkWorth(float64(hi), limit, nBlocks) {
		return int(hi)
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if viewsWalkWorth(float64(mid), limit, nBlocks) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return int(lo)
}

// rank returns the best page of matches: in one pass when the query is raw,
// exhaustive, or has few matches, else by a walk.
func (s searcher) rank(f candidateFilter, rs *rankState, rankID int64, st archiveState) ([]candidate, error) {
	if s.q.Exhaustive || s.pq.raw {
		return s.candidates(f, rankID, math.MinInt64, math.MaxInt64, noCuts)
	}
	nBlocks := st.maxID>>blockShift + 1
	// A walk in views order reads only the blocks seen since f.since, which
	// is what it weighs against ranking every match (all of which a
	// one-pass ranking reads, since or not): a since of a week over an
	// archive of years ranked 100,000 matches in one pass (150-190 ms at 1M)
	// where a walk reads a few blocks, or none.
	viewsBlocks := nBlocks
	if s.q.Sort == SortViews && f.since != 0 {
		if err := s.stmt(sqlBlocksSince).QueryRowContext(s.ctx, f.since).Scan(&viewsBlocks); err != nil {
			return nil, fmt.Errorf("store: search: %w", err)
		}
	}
	// In views order, with no filter but regions, the most viewed matches
	// may be read from the views index (viewsTop): worth it once the
	// matches are many enough, which depends on how many videos are in the
	// regions (searcher.inRegions).
	byIndex := s.q.Sort == SortViews && f.regionFree == s.pq.expr && f.since == 0 && f.channels == "" && f.cats == ""
	var n float64
	if f.walkExpr != "" {
		// Several regions in views order: count the matches in those
		// regions (their facets are in f.expr) exactly, up to where a walk
		// certainly pays. An estimate from the newest matches' density
		// misjudges regions whose videos cluster in ids, as an import of
		// one region's file after another makes them: it took ten full
		// regions for a few percent of the archive and ranked 60,000
		// matches in one pass where a walk ranks a few blocks. Counting
		// reads only the index (about 0.2-0.4 µs a match), and stops at the
		// cap, which depends on the archive's size and the page, never on
		// the number of regions.
		walkFrom := viewsWalkFrom(s.q.Limit, viewsBlocks, st.videos)
		counted := false
		if byIndex {
			inRegions, err := s.inRegions(f, st)
			if err != nil {
				return nil, err
			}
			// Count only up to where the views index pays: a common word
			// in several regions counted 127,000 matches (50 ms) at 1M
			// for a read of the index that takes 3.
			if from := viewsIndexFrom(inRegions, s.q.Limit, st.videos); from < walkFrom {
				c, err := s.probe(f.expr, from, st)
				if err != nil {
					return nil, err
				}
				if c < float64(from) {
					n, counted = c, true // every match counted
				} else if top, ok, err := s.viewsTop(f, rankID, viewsIndexCaps(float64(from), inRegions, st.videos)); err != nil || ok {
					return top, err
				}
			}
		}
		if !counted {
			var err error
			if n, err = s.probe(f.expr, walkFrom, st); err != nil {
				return nil, err
			}
		}
	} else if len(rs.phrases) == 1 && f.expr == s.pq.expr {
		// No filter in the MATCH: the phrase's count is the query's. (For
		// several phrases, assuming them independent misjudges sparse
		// intersections, which a walk then crosses block by block: probe.)
		n = rs.phrases[0].df
	} else {
		var err error
		// f.ids is set only when the probe read every match (n < walkProbe).
		if n, f.ids, err = s.probeIDs(f.expr, walkProbe, st); err != nil {
			return nil, err
		}
	}
	if byIndex && f.walkExpr == "" && n >= walkProbe {
		// Many matches: the most viewed of them are among the most viewed
		// videos, read from the views index and tested one at a time.
		// Not with channel facets in the MATCH: testing a video against a
		// MATCH seeks every term's doclist in every segment, and measured
		// at 1M a facet made each test 4x dearer, for no gain over the
		// scan. Regions are tested on each video's rows instead, before
		// the MATCH (sqlViewsByIndexIn).
		inRegions, err := s.inRegions(f, st)
		if err != nil {
			return nil, err
		}
		if viewsIndexPays(n, inRegions, s.q.Limit, st.videos) {
			top, ok, err := s.viewsTop(f, rankID, viewsIndexCaps(n, inRegions, st.videos))
			if err != nil || ok {
				return top, err
			}
		}
	}
	if n < walkProbe || s.q.Sort == SortViews && !viewsWalkWorth(n, s.q.Limit, viewsBlocks) {
		return s.onePass(f, rankID, n)
	}
	if f.walkExpr != "" {
		f.expr = f.walkExpr
	}
	return s.walk(f, rs, rankID, n, nBlocks)
}

// inRegions estimates how many videos the regions of f hold (every video
// without regions) from the density of their facets' newest entries: it
// weighs what a read of the views index costs, never what it finds.
func (s searcher) inRegions(f candidateFilter, st archiveState) (float64, error) {
	if f.regionFacets == "" {
		return float64(st.videos), nil
	}
	return s.probe(f.regionFacets, dfProbe, st)
}

// onePass ranks every match (about n) at once. In views order, where the
// MATCH holds every filter and the matches are many for the page, it ranks
// only the most viewed instead (viewsTop): each of those is a query of its
// own, which costs about as much as ranking pointCost matches in one pass.
func (s searcher) onePass(f candidateFilter, rankID int64, n float64) ([]candidate, error) {
	const pointCost = 50
	if s.q.Sort == SortViews && !s.pq.raw && f.since == 0 && f.channels == "" && f.cats == "" &&
		float64(2*s.q.Limit*pointCost) < n {
		top, ok, err := s.viewsTop(f, rankID, viewsIndexRead{})
		if err != nil || ok {
			return top, err
		}
	}
	return s.candidates(f, rankID, math.MinInt64, math.MaxInt64, noCuts)
}

// viewsIndexShare: a search in views order reads the views index only if
// it expects to test fewer than one in viewsIndexShare of its n matches
// against the MATCH, and gives up (ranking as if there were no index) after
// testing that many. Testing a video against the MATCH costs about as much
// as reading 10-20 matches in a scan, so a word whose matches are few among
// the most viewed (words cluster by region, and so do views) costs at most
// about twice a scan.
const viewsIndexShare = 16

// regionSeekShare is the same for the videos a read in regions tests on
// their video_regions rows first: a seek costs about as much as reading a
// match or two in a scan.
const regionSeekShare = 2

// viewsIndexRead caps a read of the views index: how many videos it reads,
// and how many of those (the ones in the regions asked for) it tests
// against the MATCH. Without regions it tests every video it reads.
type viewsIndexRead struct{ rows, tests int }

// viewsIndexCaps caps a read for about n matches, inRegions being the
// videos in the regions asked for (all of them without regions): together
// the reads and the tests cost about as much as a scan of the n matches.
func viewsIndexCaps(n, inRegions float64, videos int64) viewsIndexRead {
	c := viewsIndexRead{rows: int(n / viewsIndexShare), tests: int(n / viewsIndexShare)}
	if inRegions < float64(videos) {
		c.rows = int(n / regionSeekShare)
	}
	return c
}

// viewsIndexPays: the 2·limit most viewed of n matches among videos are
// about the 2·limit·videos/n most viewed videos, if views are unrelated to
// the words and the regions, and about 2·limit·inRegions/n of those are in
// the regions; worth reading from the index if each is at most half its
// cap.
func viewsIndexPays(n, inRegions float64, limit int, videos int64) bool {
	if n < walkProbe {
		return false
	}
	c := viewsIndexCaps(n, inRegions, videos)
	rows, tests := 2*float64(limit)*float64(videos)/n, 2*float64(limit)*inRegions/n
	return rows <= float64(c.rows)/2 && tests <= float64(c.tests)/2
}

// viewsIndexFrom is the fewest matches (at least walkProbe) for which
// viewsIndexPays holds: it grows with n.
func viewsIndexFrom(inRegions float64, limit int, videos int64) int {
	lo, hi := int64(walkProbe), max(videos, walkProbe)
	if !viewsIndexPays(float64(hi), inRegions, limit, videos) {
		return int(hi) + 1
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if viewsIndexPays(float64(mid), inRegions, limit, videos) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return int(lo)
}

// viewsTop ranks, in views order, only the matches that can place in the
// page. It finds the 2·limit most viewed matches — by one scan of the
// matches that reads just the index and each match's view count (no region
// join, no grouping, no ranking function, about 1 µs a match), or, if
// byIndex.rows > 0, by reading the most viewed videos from the views index
// and testing them against the MATCH (in regions, on their regions first),
// within byIndex's caps — and the page is among those with at least the
// limit-th's views, ties included, which are ranked together as a list
// of matches. ok is false when a page's worth of ties or of hidden
// counts leaves the answer incomplete, or the index's videos run out: rank
// every match.
func (s searcher) viewsTop(f candidateFilter, rankID int64, byIndex viewsIndexRead) (_ []candidate, ok bool, _ error) {
	query, args := sqlViewsTop, []any{f.expr, 2 * s.q.Limit}
	switch {
	case byIndex.rows > 0 && f.regionFacets != "":
		query, args = sqlViewsByIndexIn, []any{f.regionFree, 2 * s.q.Limit, byIndex.rows, f.regions, byIndex.tests}
	case byIndex.rows > 0:
		query, args = sqlViewsByIndex, append(args, byIndex.tests)
	}
	rows, err := s.stmt(query).QueryContext(s.ctx, args...)
	if err != nil {
		return nil, false, queryError(s.pq, err)
	}
	type idViews struct{ id, views int64 }
	var most []idViews
	sorted := true
	for rows.Next() {
		var r idViews
		if err := rows.Scan(&r.id, &r.views); err != nil {
			rows.Close()
			return nil, false, queryError(s.pq, err)
		}
		if n := len(most); n > 0 && (r.views > most[n-1].views || r.views == most[n-1].views && r.id > most[n-1].id) {
			sorted = false
		}
		most = append(most, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, queryError(s.pq, err)
	}
	if p := s.e.o.probe; p != nil && p.ByIndex != nil && byIndex.rows > 0 {
		p.ByIndex(f.regionFacets != "", len(most) == 2*s.q.Limit && sorted)
	}
	if byIndex.rows > 0 && (len(most) < 2*s.q.Limit || !sorted) {
		// The capped index read found too few (or, against SQLite's plan,
		// not in order): the scan decides.
		return nil, false, nil
	}
	if len(most) < s.q.Limit {
		return nil, false, nil // hidden counts reach into the page
	}
	floor := most[s.q.Limit-1].views
	if len(most) == 2*s.q.Limit && most[len(most)-1].views == floor {
		return nil, false, nil // ties may go on past the scan's answer
	}
	// They are ranked in one statement, as a list the MATCH is known to
	// hold (sqlCandidatesIn): one statement each, with the region facets
	// in its MATCH, cost a read in regions more than the read itself at
	// --limit 100-500 (1,000 of them: 574 ms against 169 for a scan of
	// every match, at 100k).
	c := noCuts
	c.views = floor
	var ids []int64
	for _, r := range most {
		if r.views < floor {
			break
		}
		ids = append(ids, r.id)
	}
	in := f
	in.ids = jsonIDs(ids)
	top, err := s.candidates(in, rankID, math.MinInt64, math.MaxInt64, c)
	if err != nil {
		return nil, false, err
	}
	return s.best(top), true, nil
}

// walk returns the best page of the (about n) matches among about nBlocks
// blocks, walking them best bound first.
func (s searcher) walk(f candidateFilter, rs *rankState, rankID int64, n float64, nBlocks int64) ([]candidate, error) {
	textMax := rs.textMax
	blocks := newBlockCursor(s, f.since)
	var top []candidate
	var group []int64
	done := map[int64]bool{} // blocks ranked
	var tested, dropped int  // by ytrend_pass
	want, grow := 1, 2
	maxGap := gapWorthClosing(n, nBlocks)
	useCuts := n/float64(max(nBlocks, 1)) >= cutsMinPerBlock
	if nb := float64(nBlocks); n < walkFirst*nb { // fewer than walkFirst matches per block
		want = int(min(nb, walkFirst*nb/max(n, 1)))
	}
	if p := s.e.o.probe; p != nil && p.Group > 0 {
		want, grow = p.Group, 1
	}
	rank := func() error {
		c := s.cuts(top, rs)
		ranges, filled := idRanges(group, maxGap, func(b int64) bool { return done[b] })
		for _, b := range group {
			done[b] = true
		}
		for _, b := range filled {
			done[b] = true
		}
		for _, r := range ranges {
			if useCuts && (c != noCuts || f.since != 0) {
				t, err := s.loadCuts(r[0], r[1], c, f.since)
				if err != nil {
					return err
				}
				rs.cutTest, c.test = t, true
			}
			page, err := s.candidates(f, rankID, r[0], r[1], c)
			if t := rs.cutTest; t != nil {
				tested, dropped = tested+t.tested, dropped+t.dropped
			}
			rs.cutTest, c.test = nil, false
			if err != nil {
				return err
			}
			top = append(top, page...)
		}
		top = s.best(top)
		group = group[:0]
		// Bigger groups run fewer queries (each seeks every term of the
		// MATCH), and in newest-first order the cuts and the stop test keep
		// them from ranking much more: measured at 1M, a third less time
		// than one block at a time once the page is full. In views order a
		// full page's stop test is what keeps a walk short (its blocks are
		// scattered, each a query of its own): one block at a time then.
		if s.q.Sort != SortViews || len(top) < s.q.Limit {
			want *= grow
		}
		return nil
	}
	for {
		b, ok, err := blocks.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if done[b.id] {
			continue
		}
		if len(top) == s.q.Limit {
			last := top[len(top)-1]
			stop, skip := false, false
			switch s.q.Sort {
			case SortRecent:
				stop = b.maxSeen < last.lastSeen
			case SortViews:
				stop = last.views.Valid && b.maxViews < last.views.Int64
			default:
				// Every block after this one was seen no later; none can
				// beat a rank-1 video seen then.
				stop = textMax*boost(b.maxSeen, rs.newest, 1)*boundSlack < last.score
				skip = textMax*boost(b.maxSeen, rs.newest, int(b.minRank.Int64))*boundSlack < last.score
			}
			if stop {
				break
			}
			if skip {
				continue
			}
		}
		group = append(group, b.id)
		if len(group) >= want {
			if err := rank(); err != nil {
				return nil, err
			}
		}
	}
	if len(group) > 0 {
		if err := rank(); err != nil {
			return nil, err
		}
	}
	if p := s.e.o.probe; p != nil && p.Walked != nil {
		p.Walked(len(done), blocks.read)
	}
	if p := s.e.o.probe; p != nil && p.Tested != nil {
		p.Tested(tested, dropped)
	}
	return top, nil
}

// cuts returns what a match must reach to beat the last of a full page:
// its last sighting (recent; relevance: text ≤ textMax and the trend factor
// ≤ 1 + fresh, so fresh ≥ floor/textMax − 1), its best rank (relevance, by
// the chart bonus), its views (views): plain comparisons in the SQL, before
// ytrend_score (ytrend_keep) tests the same bound on each candidate that
// passes them.
func (s searcher) cuts(top []candidate, rs *rankState) cuts {
	c := noCuts
	if len(top) < s.q.Limit {
		return c
	}
	last := top[len(top)-1]
	switch s.q.Sort {
	case SortRecent:
		c.seen = last.lastSeen
	case SortViews:
		if last.views.Valid {
			c.views = last.views.Int64
		}
	default:
		// A match scores at most textMax·(1 + fresh·(freshWeight +
		// chartWeight·chart)), fresh and chart at most 1: to reach the
		// floor it needs fresh ≥ R − 1 and chart ≥ (R − 1 − freshWeight)/
		// chartWeight, R = floor/textMax.
		r := last.score / (rs.textMax * boundSlack)
		switch f := r - 1; {
		case f >= 1: // not even a perfect match seen now
			c.seen = math.MaxInt64
		case f > 0:
			age := freshHalfLife * math.Log2(1/f)
			c.seen = rs.newest - int64(age) - 1000 // a millisecond of slack for rounding
		}
		if ch := (r - 1 - freshWeight) / chartWeight; ch > 0 {
			// chart = 1 − ln(rank)/ln(chartDepth) ≥ ch ⇔ rank ≤ chartDepth^(1−ch)
			c.rank = max(0, int64(math.Floor(math.Pow(chartDepth, 1-ch)*boundSlack)))
		}
	}
	return c
}

// blockCursor reads video_blocks in walking order — newest sighting first,
// or most views first for SortViews — a page at a time, since a walk that
// stops early needs only its first few blocks of about a thousand. Blocks
// seen before since cannot hold a match and are not read.
type blockCursor struct {
	s     searcher
	since int64
	page  []block
	after [2]int64 // the last block read's sort key and id
	size  int
	done  bool
	read  int // blocks returned so far
}

func newBlockCursor(s searcher, since int64) *blockCursor {
	return &blockCursor{s: s, since: since, after: [2]int64{math.MaxInt64, math.MaxInt64}, size: 32}
}

// next returns the next block; false at the end.
func (c *blockCursor) next() (block, bool, error) {
	if len(c.page) == 0 && !c.done {
		if err := c.fetch(); err != nil {
			return block{}, false, err
		}
	}
	if len(c.page) == 0 {
		return block{}, false, nil
	}
	b := c.page[0]
	c.page = c.page[1:]
	c.read++
	return b, true, nil
}

func (c *blockCursor) fetch() error {
	rows, err := c.s.stmt(c.s.st.blocks).QueryContext(c.s.ctx, c.since, c.after[0], c.after[1], c.size)
	if err != nil {
		return fmt.Errorf("store: search: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var b block
		if err := rows.Scan(&b.id, &b.maxSeen, &b.minRank, &b.maxViews); err != nil {
			return fmt.Errorf("store: search: %w", err)
		}
		c.page = append(c.page, b)
		c.after = [2]int64{b.maxSeen, b.id}
		if c.s.q.Sort == SortViews {
			c.after[0] = b.maxViews
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: search: %w", err)
	}
	c.done = n < c.size
	c.size = min(2*c.size, 512)
	return nil
}

// rangeCost is what ranking one more rowid range costs, in matches ranked:
// each range is a query of its own, and FTS5 seeks every term of the MATCH
// to its start (the same cost as viewsTop's point queries).
const rangeCost = 50

// gapWorthClosing is the widest gap, in blocks, between two blocks of a
// group that costs less to rank along than a range query of its own, for a
// query with about n matches over nBlocks blocks.
func gapWorthClosing(n float64, nBlocks int64) int64 {
	perBlock := n / float64(max(nBlocks, 1))
	if perBlock*float64(nBlocks) < rangeCost {
		return nBlocks
	}
	return int64(rangeCost / perBlock)
}

// idRanges turns block ids into rowid ranges [lo, hi] (rowid = -id) covering
// their videos, closing each gap between them of at most maxGap blocks
// (unless it holds a block already ranked: done). Scattered blocks stay
// separate ranges: an archive imported one region's file after another holds
// its newest videos at the end of each region's ids, and closing the gaps
// between those (as a fixed cap on the number of ranges did) ranked eight
// times the blocks the walk asked for. The blocks that fill the closed gaps
// are returned too: ranked along, they must not be ranked again. It sorts
// blocks in place.
func idRanges(blocks []int64, maxGap int64, done func(int64) bool) (ranges [][2]int64, filled []int64) {
	slices.Sort(blocks)
	blocks = slices.Compact(blocks)
	type run struct{ first, last int64 }
	var runs []run
	for _, b := range blocks {
		n := len(runs)
		if n > 0 && runs[n-1].last+1 == b {
			runs[n-1].last = b
			continue
		}
		if n > 0 && b-runs[n-1].last-1 <= maxGap {
			closable := true
			for g := runs[n-1].last + 1; g < b; g++ {
				if done(g) {
					closable = false
					break
				}
			}
			if closable {
				for g := runs[n-1].last + 1; g < b; g++ {
					filled = append(filled, g)
				}
				runs[n-1].last = b
				continue
			}
		}
		runs = append(runs, run{first: b, last: b})
	}
	for _, r := range runs {
		first, last := r.first<<blockShift, (r.last+1)<<blockShift-1
		ranges = append(ranges, [2]int64{-last, -first})
	}
	return ranges, filled
}

// best sorts candidates in the search's order and keeps a page of them.
func (s searcher) best(c []candidate) []candidate {
	slices.SortFunc(c, s.compare)
	return c[:min(len(c), s.q.Limit)]
}

// compare orders candidates as sqlCandidates' ORDER BY does: negative when a
// comes first.
func (s searcher) compare(a, b candidate) int {
	score := cmp.Compare(b.score, a.score)
	seen := cmp.Compare(b.lastSeen, a.lastSeen)
	id := cmp.Compare(b.id, a.id)
	switch s.q.Sort {
	case SortRecent:
		return cmp.Or(seen, score, id)
	case SortViews:
		// Hidden counts last, then most views first.
		hidden := cmp.Compare(boolInt(!a.views.Valid), boolInt(!b.views.Valid))
		return cmp.Or(hidden, cmp.Compare(b.views.Int64, a.views.Int64), score, id)
	default:
		return cmp.Or(score, seen, id)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
