package sim

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// The simulated world. Videos are published in daily cohorts, one cohort per
// market (a language and the regions that watch it), each video by a channel
// from its cohort's fixed pool. A region's chart at a moment is the 200
// candidates of the last eight days with the highest trending score there:
//
//	score = affinity(video, region) × views per hour now × noise(video, region, epoch)
//
// Affinity is what makes one video trend in several regions: a "global"
// video (English music, games, film) reaches a random subset of all regions;
// an English video has a home region and spills into the other English ones;
// French videos also reach Canada. Views per hour rise for a couple of hours
// after publication, then decay over a day or two, so new videos climb and old
// ones fall out; the noise term is redrawn every epoch (Config.Churn, an hour
// by default), so ranks churn between fetches. Every draw is a hash of the
// seed and the thing drawn for, so any video or chart can be regenerated in
// any order and two servers with the same seed agree.

const (
	chartSize   = 200 // YouTube's mostPopular charts hold at most 200 videos
	windowDays  = 7   // a chart considers videos published today and the 7 days before
	maxSearch   = 500 // search.list never pages past 500 results
	dayCacheLen = 24  // days of generated videos kept in memory
	chartCache  = 512 // charts kept in memory
)

// cohortSpec describes the videos one market publishes each day.
type cohortSpec struct {
	name     string
	lang     string
	perDay   int
	channels int
	views    float64  // median lifetime views of a video
	cats     []weight // channel categories
}

type weight struct {
	v string
	w float64
}

var (
	globalCats = []weight{{catMusic, 45}, {catGaming, 25}, {catEntertainment, 15}, {catFilm, 10}, {catScience, 5}}
	localCats  = []weight{
		{catEntertainment, 20}, {catMusic, 18}, {catGaming, 15}, {catSports, 10}, {catComedy, 8},
		{catPeople, 8}, {catNews, 7}, {catScience, 5}, {catHowto, 5}, {catFilm, 4},
	}
)

// cohorts, in the order their index is packed into video IDs: append only.
var cohorts = [...]cohortSpec{
	{name: "global", lang: "en", perDay: 30, channels: 40, views: 1.2e6, cats: globalCats},
	{name: "en", lang: "en", perDay: 90, channels: 160, views: 5e5, cats: localCats},
	{name: "de", lang: "de", perDay: 45, channels: 70, views: 3e5, cats: localCats},
	{name: "fr", lang: "fr", perDay: 45, channels: 70, views: 3e5, cats: localCats},
	{name: "hi", lang: "hi", perDay: 50, channels: 80, views: 6e5, cats: localCats},
	{name: "pt", lang: "pt", perDay: 45, channels: 70, views: 4e5, cats: localCats},
	{name: "ja", lang: "ja", perDay: 45, channels: 70, views: 3e5, cats: localCats},
}

const (
	cohortGlobal = iota
	cohortEN
	cohortDE
	cohortFR
	cohortHI
	cohortPT
	cohortJA
)

// englishHomes are where an English-cohort video is first popular; "" means
// one of the regions without a market of their own.
var englishHomes = []weight{{"US", 30}, {"GB", 18}, {"CA", 10}, {"AU", 10}, {"IN", 8}, {"", 24}}

// market maps each region that has content of its own to its cohort; every
// other region watches global and English videos.
var market = map[regions.Code]int{
	"US": cohortEN, "GB": cohortEN, "CA": cohortEN, "AU": cohortEN,
	"DE": cohortDE, "FR": cohortFR, "IN": cohortHI, "BR": cohortPT, "JP": cohortJA,
}

var englishCore = []regions.Code{"US", "GB", "CA", "AU"}

type channel struct {
	id, title, handle string
	category          string
	artist            string            // music channels: the performer their titles name
	slots             map[string]string // words the channel's name chose (its team, league, city...), kept for its videos
	lex               *lexicon
	pop               float64 // popularity multiplier
}

type video struct {
	key       uint64 // day, cohort and index packed, before scrambling
	id        string
	day       int
	cohort    int
	published time.Time
	ch        *channel
	category  string

	title, description string
	tags               []string
	defaultLanguage    string
	audioLanguage      string
	searchText         string // normalized title, tags, channel and description

	seconds    int // 0 for a live stream
	live       bool
	definition string
	caption    bool
	licensed   bool
	thumbs     int      // 3 (default, medium, high), 4 (+standard) or 5 (+maxres)
	blocked    []string // regionRestriction.blocked

	total       float64 // views the video converges to
	tau         float64 // hours: how fast views come in
	likeRate    float64
	commentRate float64
	hideLikes   bool
	hideComment bool

	home  regions.Code // English cohort: where it is first popular ("" = the rest of the world)
	reach float64      // global cohort: fraction of regions it trends in
}

type world struct {
	seed     uint64
	churn    time.Duration
	channels [len(cohorts)][]*channel

	mu     sync.Mutex
	days   *lru[int, []*video]
	charts *lru[chartKey, []*video]
}

type chartKey struct {
	region   regions.Code
	category string
	epoch    int64
}

func newWorld(seed uint64, churn time.Duration) *world {
	w := &world{
		seed:   seed,
		churn:  churn,
		days:   newLRU[int, []*video](dayCacheLen),
		charts: newLRU[chartKey, []*video](chartCache),
	}
	for k := range cohorts {
		w.channels[k] = w.genChannels(k)
	}
	return w
}

// epoch numbers the churn periods since the Unix epoch.
func (w *world) epoch(t time.Time) int64 {
	return floorDiv(t.UnixNano(), int64(w.churn))
}

func (w *world) epochStart(e int64) time.Time {
	return time.Unix(0, e*int64(w.churn)).UTC()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// dayNumber is the UTC day t falls in, counted from 1970-01-01.
func dayNumber(t time.Time) int { return int(floorDiv(t.Unix(), 86400)) }

func dayStart(d int) time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// chart returns the region's chart for the category as it stood at the start
// of the epoch, best first; at most chartSize videos.
func (w *world) chart(region regions.Code, category string, epoch int64) []*video {
	key := chartKey{region, category, epoch}
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.charts.get(key); ok {
		return c
	}
	t := w.epochStart(epoch)
	type scored struct {
		v *video
		s float64
	}
	var cands []scored
	today := dayNumber(t)
	for d := today - windowDays; d <= today; d++ {
		for _, v := range w.dayLocked(d) {
			if v.published.After(t) || (category != "0" && v.category != category) {
				continue
			}
			a := w.affinity(v, region)
			if a == 0 {
				continue
			}
			cands = append(cands, scored{v, a * v.velocity(t) * w.noise(v, region, epoch)})
		}
	}
	slices.SortFunc(cands, func(a, b scored) int {
		if c := cmp.Compare(b.s, a.s); c != 0 {
			return c
		}
		return strings.Compare(a.v.id, b.v.id)
	})
	out := make([]*video, 0, min(len(cands), chartSize))
	for _, c := range cands[:min(len(cands), chartSize)] {
		out = append(out, c.v)
	}
	w.charts.put(key, out)
	return out
}

// recent returns every video published in the chart window up to t, for
// search; region "" means all regions.
func (w *world) recent(region regions.Code, t time.Time) []*video {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*video
	today := dayNumber(t)
	for d := today - windowDays; d <= today; d++ {
		for _, v := range w.dayLocked(d) {
			if v.published.After(t) || (region != "" && w.affinity(v, region) == 0) {
				continue
			}
			out = append(out, v)
		}
	}
	return out
}

// lookup finds a video by its ID as videos.list?id= does: nil for an ID
// this world never issued or a video not yet published at now.
func (w *world) lookup(id string, now time.Time) *video {
	day, k, i, ok := w.decodeID(id)
	if !ok || day > dayNumber(now) || day < dayNumber(now)-3650 {
		return nil
	}
	w.mu.Lock()
	vs := w.dayLocked(day)
	w.mu.Unlock()
	for _, spec := range cohorts[:k] {
		i += spec.perDay // a day's videos are stored cohort by cohort
	}
	if v := vs[i]; v.id == id && !v.published.After(now) {
		return v
	}
	return nil
}

// affinity is how strongly region watches v: 0 (not at all) to 1 (home).
func (w *world) affinity(v *video, r regions.Code) float64 {
	if slices.Contains(v.blocked, string(r)) {
		return 0
	}
	u := unit(mix(v.key ^ mix(w.seed^hashString(string(r))) ^ 0x51ed))
	_, featured := market[r]
	switch v.cohort {
	case cohortGlobal:
		if u < v.reach {
			a := 0.55 + 0.45*unit(mix(v.key^hashString(string(r))^w.seed))
			if m, ok := market[r]; ok && m != cohortEN {
				a *= 0.6 // a market with its own language prefers its own videos
			}
			return a
		}
	case cohortEN:
		switch {
		case r == v.home:
			return 1
		case v.home == "" && !featured:
			if u < 0.6 {
				return 0.9
			}
		case slices.Contains(englishCore, r):
			if u < 0.3 {
				return 0.55
			}
		case r == "IN":
			if u < 0.12 {
				return 0.4
			}
		case !featured && v.home == "US":
			if u < 0.25 {
				return 0.45
			}
		}
	case cohortFR:
		switch r {
		case "FR":
			return 1
		case "CA":
			if u < 0.3 {
				return 0.6
			}
		}
	default:
		if m, ok := market[r]; ok && m == v.cohort {
			return 1
		}
	}
	return 0
}

// noise is the epoch's random factor in v's score in region r: log-normal,
// median 1.
func (w *world) noise(v *video, r regions.Code, epoch int64) float64 {
	h := mix(v.key ^ mix(uint64(epoch)^w.seed) ^ hashString(string(r)))
	return math.Exp(0.35 * gauss(h))
}

// velocity is v's views per hour at t: a ramp over the first hours, then
// exponential decay.
func (v *video) velocity(t time.Time) float64 {
	age := t.Sub(v.published).Hours()
	if age < 0 {
		return 0
	}
	return v.total / v.tau * math.Exp(-age/v.tau) * (1 - math.Exp(-age/1.5))
}

// stats are v's counts at t; they only ever grow.
func (v *video) stats(t time.Time) (views, likes, comments uint64) {
	age := max(t.Sub(v.published).Hours(), 0)
	n := 120 + v.total*(1-math.Exp(-age/v.tau))
	return uint64(n), uint64(n * v.likeRate), uint64(n * v.commentRate)
}

// day returns the videos published on UTC day d, generating them if needed.
// The caller holds w.mu.
func (w *world) dayLocked(d int) []*video {
	if vs, ok := w.days.get(d); ok {
		return vs
	}
	var vs []*video
	for k, spec := range cohorts {
		for i := range spec.perDay {
			vs = append(vs, w.genVideo(d, k, i))
		}
	}
	w.days.put(d, vs)
	return vs
}
