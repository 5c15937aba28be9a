package search

import (
	"container/heap"
	"database/sql/driver"
	"math"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
)

// Ranking.
//
// Text relevance is Okapi BM25 exactly as FTS5's bm25() computes it
// (fts5_aux.c), with the column weights of columnWeights:
//
//	F(p)   = Σ_col weight(col) · tf(p, col)                  weighted frequency of phrase p
//	idf(p) = max(ln((N − df(p) + 0.5) / (df(p) + 0.5)), 1e-6)
//	text   = Σ_p idf(p) · F(p)·(k1+1) / (F(p) + k1·(1 − b + b·D/avgdl))   k1 = 1.2, b = 0.75
//
// where D is the video's length in tokens over its text columns (title,
// tags, channel, description, title grams; facets do not count), avgdl the
// archive's average, N the number of videos and df(p) the number containing p.
// As in FTS5, a word in more than half the videos gets the floor IDF, so
// scores are comparable within one query only.
// The store computes it itself instead of calling bm25(): FTS5 derives every
// IDF by counting the whole doclist of each phrase on every query, which is
// ~100 ms for a common word at a million videos, whatever the LIMIT. Here:
//
//   - tf in the short columns (title, tags, channel, each with its CJK grams) comes
//     from the per-video term blob (text.go), exact up to phrase adjacency
//     (a phrase's count is the smallest count of its words);
//   - tf in the description is stored only when a word repeats; a phrase
//     absent from the short columns must be in the description (the video
//     matched), so it counts once there; a phrase present in a short column
//     and once in the description counts 0 there — at most a few percent of
//     that phrase's score, since the short columns weigh 3-10 times more;
//   - df(p) is exact up to dfProbe matches, and above that estimated from how
//     densely p's newest dfProbe matches are packed among the newest videos.
//
// The blend with how recently and how high the video trended is
//
//	score = text · (1 + fresh·(freshWeight + chartWeight·chart))
//	fresh = 2^(−age/freshHalfLife), age = newest sighting in the archive − video's last sighting
//	chart = 1 − ln(best rank)/ln(chartDepth), clamped to [0, 1]; 0 if never on a chart
//
// so a video on top of today's chart scores up to twice the same text match
// in a video last seen months ago, and text still decides between a title
// match and a passing mention. How high a video charted counts as long as it
// is fresh: trending is about now, and a chart position from last year
// says little about what someone searching today wants. (It is also what
// lets a search stop early: the bonus every old video could still claim
// fades with its age; see search_walk.go.) Age is measured from the archive's
// newest sighting rather than the wall clock, so a search ranks the same
// until new pages arrive.
const (
	bm25K1 = 1.2
	bm25B  = 0.75

	freshWeight   = 0.5
	freshHalfLife = 7 * 24 * 3600 * 1e6 // microseconds
	chartWeight   = 0.5
	chartDepth    = 200

	dfProbe = 64
)

// idf is FTS5's bm25 IDF, floored as FTS5 floors it.
func idf(n, df float64) float64 {
	v := math.Log((n - df + 0.5) / (df + 0.5))
	if v <= 0 {
		return 1e-6
	}
	return v
}

// rankedPhrase is a query phrase prepared for scoring.
type rankedPhrase struct {
	tokens []uint32 // hashes of the phrase's tokens
	grams  []uint32 // hashes of the title_grams tokens that must all be present
	df     float64  // videos containing it, estimated (docFreq)
	idf    float64
}

func newRankedPhrase(p phrase) rankedPhrase {
	rp := rankedPhrase{idf: 1}
	for _, t := range p.tokens {
		rp.tokens = append(rp.tokens, termHash(t))
	}
	for _, run := range p.runs {
		if len([]rune(run)) == 1 {
			rp.grams = append(rp.grams, termHash(run))
			continue
		}
		for _, g := range bigrams(run) {
			rp.grams = append(rp.grams, termHash(g))
		}
	}
	return rp
}

// counts returns the phrase's term frequency per column: title, tags,
// channel, description, each column's CJK/Thai grams included.
func (rp rankedPhrase) counts(t Terms) [4]float64 {
	var out [4]float64
	var desc = 255
	for i, h := range rp.tokens {
		c := t.lookup(h)
		for col := 0; col < 3; col++ {
			if i == 0 || float64(c[col]) < out[col] {
				out[col] = float64(c[col])
			}
		}
		desc = min(desc, int(c[3]))
	}
	if len(rp.grams) > 0 {
		// The run's grams, per column: all must be there.
		g := [4]int{255, 255, 255, 255}
		for _, h := range rp.grams {
			c := t.lookup(h)
			for col := range g {
				g[col] = min(g[col], int(c[col]))
			}
		}
		for col := 0; col < 3; col++ {
			out[col] = max(out[col], float64(g[col]))
		}
		desc = max(desc, g[3])
	}
	if out[0] == 0 && out[1] == 0 && out[2] == 0 {
		desc = max(desc, 1) // it matched, so it is in the description
	}
	out[3] = float64(desc)
	return out
}

// textScore is bm25 for one video.
func textScore(phrases []rankedPhrase, t Terms, docLen int, avgdl float64) float64 {
	if avgdl <= 0 {
		avgdl = 1
	}
	norm := bm25K1 * (1 - bm25B + bm25B*float64(docLen)/avgdl)
	s := 0.0
	for _, p := range phrases {
		c := p.counts(t)
		f := columnWeights[colTitle]*c[0] + columnWeights[colTags]*c[1] +
			columnWeights[colChannel]*c[2] + columnWeights[colDescription]*c[3]
		s += p.idf * f * (bm25K1 + 1) / (f + norm)
	}
	return s
}

// boost is the trend factor text relevance is multiplied by.
func boost(lastSeen, newest int64, bestRank int) float64 {
	age := float64(max(0, newest-lastSeen))
	fresh := math.Exp2(-age / freshHalfLife)
	return 1 + fresh*(freshWeight+chartWeight*chartOf(bestRank))
}

// chartOf is boost's chart term for a best rank (0: never charted).
func chartOf(bestRank int) float64 {
	if bestRank >= 0 && bestRank < len(charts) {
		return charts[bestRank]
	}
	return chartTerm(bestRank)
}

// charts is chartTerm of the ranks a chart holds, computed once: a walk
// tests a bound with it for every match it reads.
var charts = func() (t [256]float64) {
	for r := range t {
		t[r] = chartTerm(r)
	}
	return t
}()

func chartTerm(bestRank int) float64 {
	if bestRank < 1 {
		return 0
	}
	return min(1, max(0, 1-math.Log(float64(bestRank))/math.Log(chartDepth)))
}

// rankState is what ytrend_rank needs to score one search's candidates.
type rankState struct {
	raw     bool // text relevance is FTS5's bm25 (the fts_rank argument)
	phrases []rankedPhrase
	avgdl   float64
	newest  int64

	// What ytrend_keep needs. textMax bounds text relevance (+Inf for raw
	// queries). kept holds the best limit sort keys of the candidates kept
	// so far — scores for relevance, last sightings for recent, view counts
	// for views — all real matches of this search (a walk's page among
	// them), so a candidate whose key cannot reach the least of them
	// cannot place in the page.
	prune   bool // false: keep everything (Query.Exhaustive, the reference)
	order   SortOrder
	limit   int
	textMax float64
	kept    keyHeap

	// cutTest, while a walk ranks a range, is what ytrend_pass tests its
	// matches with (cuts.go); nil otherwise.
	cutTest *cutTest
}

// keep reports whether a candidate can still place in the page, and
// remembers its key where the key is known before scoring.
func (rs *rankState) keep(seen int64, best int, views int64) bool {
	if !rs.prune {
		return true
	}
	switch rs.order {
	case SortRecent:
		return rs.kept.offer(float64(seen), rs.limit)
	case SortViews:
		return rs.kept.offer(float64(views), rs.limit)
	}
	return rs.mayPlace(seen, best, views) // a score is known only once scored
}

// mayPlace reports whether a candidate with these values could place, or
// any candidate whose values these bound (a last sighting and view count
// no lower, a best rank no higher: ytrend_pass's bounds). It remembers
// nothing; keep's relevance test is this one.
func (rs *rankState) mayPlace(seen int64, best int, views int64) bool {
	if !rs.prune || len(rs.kept) < rs.limit {
		return true
	}
	switch rs.order {
	case SortRecent:
		return float64(seen) >= rs.kept[0]
	case SortViews:
		return float64(views) >= rs.kept[0]
	}
	return !(rs.textMax*boost(seen, rs.newest, best)*boundSlack < rs.kept[0])
}

// keyHeap is a min-heap of the best keys so far.
type keyHeap []float64

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *keyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer adds k to the best limit keys and reports whether k is at least the
// least of them (a tie with the last place still needs its score).
func (h *keyHeap) offer(k float64, limit int) bool {
	if len(*h) < limit {
		heap.Push(h, k)
		return true
	}
	if k < (*h)[0] {
		return false
	}
	if k > (*h)[0] {
		(*h)[0] = k
		heap.Fix(h, 0)
	}
	return true
}

// ytrend_rank(state, last_seen, best_rank, terms, doc_len, fts_rank) is the
// ranking formula above, as an SQL function, so that SQLite scores and sorts
// a query's candidates and only the final page is read back into Go. state
// identifies a rankState registered for the duration of one search.
//
// ytrend_keep(state, last_seen, best_rank, views) is 0 for a candidate that
// cannot place in the page (rankState.keep): the query then skips
// ytrend_rank, whose term blob argument costs more than the whole test.
//
// ytrend_score(state, last_seen, best_rank, views, terms, doc_len,
// fts_rank) is both in one call: -1 for a candidate that cannot place, else
// its score. Where most candidates can place (relevance and recent: 94% of
// those tested in the query set), it spares each a call into Go, boxing of
// its arguments included (the calls were 11% of a search's CPU), for the
// term blob the few that cannot place read for nothing. In views order 20%
// could place: keep, then rank.
func init() {
	sqlite.MustRegisterFunction("ytrend_rank", &sqlite.FunctionImpl{
		NArgs:        6,
		VolatileArgs: true, // terms is read during the call only
		Scalar:       rankFunc,
	})
	sqlite.MustRegisterFunction("ytrend_keep", &sqlite.FunctionImpl{
		NArgs:  4,
		Scalar: keepFunc,
	})
	sqlite.MustRegisterFunction("ytrend_score", &sqlite.FunctionImpl{
		NArgs:        7,
		VolatileArgs: true,
		Scalar:       scoreFunc,
	})
}

func keepFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	rs := rankStateOf(args[0])
	if rs == nil {
		return int64(1), nil
	}
	if keepArgs(rs, args[1], args[2], args[3]) {
		return int64(1), nil
	}
	return int64(0), nil
}

// keepArgs is rs.keep of an SQL function's last_seen, best_rank and views.
func keepArgs(rs *rankState, seenArg, bestArg, viewsArg driver.Value) bool {
	seen, _ := seenArg.(int64)
	best, _ := bestArg.(int64) // NULL (never charted) reads as 0
	views, ok := viewsArg.(int64)
	if !ok {
		views = -1 // hidden
	}
	return rs.keep(seen, int(best), views)
}

// The rankStates of the searches under way, by the id registerRankState
// gave them, looked up by every call of the four SQL functions (once per
// match a walk reads). Most are in a slot of a fixed table, read without a
// lock: the id holds the slot in its low bits and a number no other search
// had above them, so a slot's next search is never taken for the last. Past
// 1,024 searches at once (1<<rankSlotBits), the rest go to a map (negative
// ids).
const rankSlotBits = 10

var rankStates struct {
	slots [1 << rankSlotBits]atomic.Pointer[rankEntry]

	mu       sync.Mutex
	seq      int64
	free     []int64 // slots released
	unused   int64   // slots below it were used at least once
	overflow sync.Map
}

type rankEntry struct {
	id int64
	rs *rankState
}

// rankStateOf is the rankState an SQL function's state argument names; nil
// if none is registered (the search ended).
func rankStateOf(key driver.Value) *rankState {
	id, _ := key.(int64)
	if id > 0 {
		if e := rankStates.slots[id&(1<<rankSlotBits-1)].Load(); e != nil && e.id == id {
			return e.rs
		}
		return nil
	}
	if v, ok := rankStates.overflow.Load(id); ok {
		return v.(*rankState)
	}
	return nil
}

func registerRankState(rs *rankState) int64 {
	r := &rankStates
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	slot := int64(-1)
	switch {
	case len(r.free) > 0:
		slot = r.free[len(r.free)-1]
		r.free = r.free[:len(r.free)-1]
	case r.unused < 1<<rankSlotBits:
		slot = r.unused
		r.unused++
	}
	if slot < 0 {
		id := -r.seq
		r.overflow.Store(id, rs)
		return id
	}
	id := r.seq<<rankSlotBits | slot
	r.slots[slot].Store(&rankEntry{id: id, rs: rs})
	return id
}

func releaseRankState(id int64) {
	r := &rankStates
	if id <= 0 {
		r.overflow.Delete(id)
		return
	}
	slot := id & (1<<rankSlotBits - 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.slots[slot].Load(); e != nil && e.id == id {
		r.slots[slot].Store(nil)
		r.free = append(r.free, slot)
	}
}

func rankFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	rs := rankStateOf(args[0])
	if rs == nil {
		return 0.0, nil
	}
	return rs.score(args[1], args[2], args[3], args[4], args[5]), nil
}

func scoreFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	rs := rankStateOf(args[0])
	if rs == nil {
		return 0.0, nil
	}
	if !keepArgs(rs, args[1], args[2], args[3]) {
		return -1.0, nil
	}
	return rs.score(args[1], args[2], args[4], args[5], args[6]), nil
}

// score is ytrend_rank of its arguments after the state.
func (rs *rankState) score(seenArg, bestArg, termsArg, docLenArg, ftsRankArg driver.Value) float64 {
	seen, _ := seenArg.(int64)
	best, _ := bestArg.(int64) // NULL (never charted) reads as 0
	var text float64
	if rs.raw {
		r, _ := ftsRankArg.(float64)
		text = -r // FTS5's bm25 is negative, better is lower
	} else {
		t, _ := termsArg.([]byte)
		docLen, _ := docLenArg.(int64)
		text = textScore(rs.phrases, Terms(t), int(docLen), rs.avgdl)
	}
	score := text * boost(seen, rs.newest, int(best))
	if rs.prune && rs.order == SortRelevance {
		rs.kept.offer(score, rs.limit)
	}
	return score
}
