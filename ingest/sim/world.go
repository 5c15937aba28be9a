package sim

import (
	"cmp"
	"container/list"
	"encoding/base64"
	"encoding/binary"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

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

func (w *world) genChannels(k int) []*channel {
	spec := cohorts[k]
	lex := lexicons[spec.lang]
	out := make([]*channel, spec.channels)
	for i := range out {
		r := w.rng(0xc4a7, uint64(k), uint64(i))
		ch := &channel{lex: lex, category: pickWeighted(r, spec.cats)}
		idBytes := make([]byte, 16)
		binary.BigEndian.PutUint64(idBytes, mix(w.seed^uint64(k)<<32^uint64(i)^0xc4a7))
		binary.BigEndian.PutUint64(idBytes[8:], mix(w.seed^uint64(k)<<40^uint64(i)^0x7e57))
		ch.id = "UC" + base64.RawURLEncoding.EncodeToString(idBytes)
		f := filler{lex: lex, r: r}
		if ch.category == catMusic {
			ch.artist = f.artist()
			f.fixed = map[string]string{"artist": ch.artist}
		}
		ch.title = truncateRunes(f.fill(pick(r, channelForms(lex, ch.category))), 60)
		ch.handle = handleFor(ch.title, r)
		ch.slots = map[string]string{}
		for k, v := range f.used {
			if k != "word" {
				ch.slots[k] = v
			}
		}
		if ch.artist != "" {
			ch.slots["artist"] = ch.artist
		}
		ch.pop = math.Exp(0.8 * r.NormFloat64())
		out[i] = ch
	}
	return out
}

func channelForms(lex *lexicon, cat string) []string {
	if forms, ok := lex.channels[cat]; ok {
		return forms
	}
	return lex.channels[catEntertainment]
}

// genVideo makes the i-th video of cohort k published on day d.
func (w *world) genVideo(d, k, i int) *video {
	spec := cohorts[k]
	r := w.rng(0x71de0, uint64(d), uint64(k), uint64(i))
	v := &video{day: d, cohort: k}
	v.key = uint64(uint16(d))<<48 | uint64(k)<<44 | uint64(i)<<32
	v.key |= uint64(uint32(mix(w.seed ^ v.key)))
	v.id = w.encodeID(v.key)
	v.published = dayStart(d).Add(time.Duration(r.Int64N(86400)) * time.Second)

	chs := w.channels[k]
	v.ch = chs[int(float64(len(chs))*math.Pow(r.Float64(), 1.3))] // popular channels post more
	v.category = v.ch.category

	v.total = clamp(spec.views*v.ch.pop*math.Exp(1.1*r.NormFloat64()), 4e3, 1.2e8)
	v.tau = 10 + 50*r.Float64()
	v.likeRate = 0.008 + 0.06*r.Float64()*r.Float64()
	v.commentRate = 0.0003 + 0.004*r.Float64()*r.Float64()
	v.hideLikes = r.Float64() < 0.07
	v.hideComment = r.Float64() < 0.05

	switch k {
	case cohortGlobal:
		v.reach = 0.35 + 0.65*r.Float64()
	case cohortEN:
		v.home = regions.Code(pickWeighted(r, englishHomes))
	}
	if r.Float64() < 0.04 && k != cohortDE {
		v.blocked = []string{"DE"} // a rights dispute, as music videos often have
	}

	v.seconds = duration(r, v.category)
	if r.Float64() < 0.006 {
		v.live, v.seconds = true, 0
		v.total = max(v.total/10, 2e3)
	}
	v.definition = "hd"
	if r.Float64() < 0.04 {
		v.definition = "sd"
	}
	v.caption = r.Float64() < 0.3
	v.licensed = r.Float64() < 0.7
	v.thumbs = 3
	if r.Float64() < 0.8 {
		v.thumbs = 4
		if r.Float64() < 0.7 {
			v.thumbs = 5
		}
	}
	w.genText(v, r)
	return v
}

func (w *world) genText(v *video, r *rand.Rand) {
	lex := v.ch.lex
	f := filler{lex: lex, r: r, year: v.published.Year(), ch: v.ch, fixed: maps.Clone(v.ch.slots)}
	templates := lex.titles[v.category]
	if v.cohort == cohortEN && v.home == "IN" && v.category == catSports {
		templates = []string{"India vs {team} | {n}th ODI Highlights", "{team} vs {team2} | Match Highlights"}
	}
	v.title = truncateRunes(f.fill(pick(r, templates)), 100)
	f.setFixed("title", v.title)
	f.setFixed("channel", v.ch.title)
	f.setFixed("handle", v.ch.handle)

	descs := lex.descs[v.category]
	if len(descs) == 0 || r.Float64() < 0.3 {
		descs = lex.descs[""]
	}
	desc := f.fill(pick(r, descs))
	if desc != "" && r.Float64() < 0.75 {
		lines := slices.Clone(lex.follow)
		r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		desc += "\n\n" + f.fill(strings.Join(lines[:1+r.IntN(len(lines))], "\n"))
	}

	var tags []string
	if r.Float64() < 0.7 {
		pool := append(slices.Clone(lex.tags[v.category]), lex.tags[""]...)
		for _, s := range []string{v.ch.title, f.used["song"], f.used["game"], f.used["team"], f.used["artist"]} {
			if s != "" {
				pool = append(pool, s)
			}
		}
		r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		tags = dedupe(pool[:min(len(pool), 3+r.IntN(8))])
	}
	if len(tags) > 0 && desc != "" && r.Float64() < 0.5 {
		var hs []string
		for _, t := range tags[:min(3, len(tags))] {
			hs = append(hs, "#"+strings.Join(strings.Fields(t), ""))
		}
		desc += "\n\n" + strings.Join(hs, " ")
	}
	v.description = truncateRunes(desc, 5000)
	v.tags = tags

	if r.Float64() < 0.45 {
		v.defaultLanguage = lex.lang
	}
	if r.Float64() < 0.9 {
		v.audioLanguage = pick(r, lex.audio)
	}
	v.searchText = normalizeText(strings.Join([]string{v.title, strings.Join(v.tags, " "), v.ch.title, v.description}, "\n"))
}

// duration draws a length in seconds typical of the category; one video in
// eight is a Short.
func duration(r *rand.Rand, cat string) int {
	if r.Float64() < 0.12 && cat != catFilm && cat != catMusic && cat != catNews {
		return 10 + r.IntN(50)
	}
	lo, hi := 300, 1200
	switch cat {
	case catMusic:
		lo, hi = 130, 290
	case catGaming:
		lo, hi = 480, 2700
		if r.Float64() < 0.08 {
			lo, hi = 3600, 4*3600 // a stream's VOD
		}
	case catSports:
		lo, hi = 180, 720
	case catFilm:
		lo, hi = 60, 180
	case catNews:
		lo, hi = 120, 900
	case catEntertainment:
		lo, hi = 480, 1500
	case catComedy:
		lo, hi = 60, 600
	}
	return lo + r.IntN(hi-lo+1)
}

// isoDuration writes seconds as YouTube does: PT1H2M3S, PT4M, PT45S; P0D for
// a live stream.
func isoDuration(sec int) string {
	if sec <= 0 {
		return "P0D"
	}
	var b strings.Builder
	b.WriteString("PT")
	h, m, s := sec/3600, sec/60%60, sec%60
	if h > 0 {
		b.WriteString(strconv.Itoa(h) + "H")
	}
	if m > 0 {
		b.WriteString(strconv.Itoa(m) + "M")
	}
	if s > 0 {
		b.WriteString(strconv.Itoa(s) + "S")
	}
	return b.String()
}

// filler fills template slots for one video or channel, remembering what it
// chose so the description can name the same song as the title.
type filler struct {
	lex   *lexicon
	r     *rand.Rand
	year  int
	ch    *channel
	fixed map[string]string
	used  map[string]string
}

func (f *filler) setFixed(k, v string) {
	if f.fixed == nil {
		f.fixed = map[string]string{}
	}
	f.fixed[k] = v
}

func (f *filler) fill(tmpl string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		b.WriteString(f.slot(tmpl[i+1 : i+j]))
		tmpl = tmpl[i+j+1:]
	}
}

func (f *filler) slot(name string) string {
	if v, ok := f.fixed[name]; ok {
		return v
	}
	if v, ok := f.used[name]; ok {
		return v
	}
	var v string
	switch name {
	case "n":
		v = strconv.Itoa(2 + f.r.IntN(29))
	case "year":
		v = strconv.Itoa(f.year)
	case "amount":
		v = pick(f.r, f.lex.amounts)
	case "artist", "artist2":
		v = f.artist()
	case "song":
		if a, b := f.lex.words["songA"], f.lex.words["songB"]; len(a) > 0 && f.r.Float64() < 0.6 {
			v = pick(f.r, a) + " " + pick(f.r, b)
		} else {
			v = f.word(name)
		}
	case "slug":
		v = asciiSlug(f.slot("song"))
		if v == "" {
			v = "listen"
		}
	case "handle":
		if f.ch != nil {
			v = f.ch.handle
		} else {
			v = "official"
		}
	case "first2", "last2", "team2":
		base := strings.TrimSuffix(name, "2")
		avoid := f.slot(base)
		for range 4 {
			if v = f.word(base); v != avoid {
				break
			}
		}
	default:
		v = f.word(name)
	}
	if f.used == nil {
		f.used = map[string]string{}
	}
	f.used[name] = v
	return v
}

// word picks from the slot's list: the language's, else the shared one, else
// English.
func (f *filler) word(name string) string {
	for _, m := range []map[string][]string{f.lex.words, shared, lexEnglish.words} {
		if ws, ok := m[name]; ok && len(ws) > 0 {
			return pick(f.r, ws)
		}
	}
	return name
}

// artist invents a performer: a person, a band or a stage name.
func (f *filler) artist() string {
	switch u := f.r.Float64(); {
	case u < 0.5:
		return f.word("first") + " " + f.word("last")
	case u < 0.75:
		return f.word("band")
	case u < 0.9:
		return f.word("prefix") + " " + f.word("first")
	default:
		return f.word("first")
	}
}

// handleFor makes a channel's @handle: its name in ASCII, or romaji-like
// syllables when the name has none.
func handleFor(title string, r *rand.Rand) string {
	h := asciiSlug(title)
	h = strings.ReplaceAll(h, "-", "")
	if len(h) < 3 {
		var b strings.Builder
		for range 3 + r.IntN(3) {
			b.WriteString(pick(r, romaji))
		}
		h = b.String()
	}
	if len(h) > 24 {
		h = h[:24]
	}
	if r.Float64() < 0.3 {
		h += strconv.Itoa(r.IntN(100))
	}
	return h
}

// asciiSlug keeps the ASCII letters and digits of s, lower-cased, with dashes
// between words.
func asciiSlug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range normalizeText(s) {
		switch {
		case c < 128 && (unicode.IsLetter(c) || unicode.IsDigit(c)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		default:
			dash = true
		}
	}
	return b.String()
}

// normalizeText lower-cases s and strips Latin accents, for search matching.
func normalizeText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range strings.ToLower(s) {
		if f, ok := accentFold[c]; ok {
			b.WriteRune(f)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

var accentFold = map[rune]rune{
	'à': 'a', 'á': 'a', 'â': 'a', 'ã': 'a', 'ä': 'a', 'ç': 'c', 'è': 'e', 'é': 'e', 'ê': 'e', 'ë': 'e',
	'ì': 'i', 'í': 'i', 'î': 'i', 'ï': 'i', 'ñ': 'n', 'ò': 'o', 'ó': 'o', 'ô': 'o', 'õ': 'o', 'ö': 'o',
	'ù': 'u', 'ú': 'u', 'û': 'u', 'ü': 'u', 'ß': 's', 'œ': 'o',
}

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n]))
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if k := strings.ToLower(s); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

// Video IDs are 64-bit numbers in eleven base64url characters, as YouTube's
// are (so the last character is one of 16). The number packs the publishing
// day, the cohort, the index and a 32-bit check, scrambled by a keyed Feistel
// network so IDs look random but decode back to the video without a lookup
// table.

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func (w *world) encodeID(key uint64) string {
	x := w.feistel(key, false)
	var b [11]byte
	for i := range 10 {
		b[i] = idAlphabet[(x>>(58-6*i))&63]
	}
	b[10] = idAlphabet[(x&15)<<2]
	return string(b[:])
}

func (w *world) decodeID(id string) (day, cohort, index int, ok bool) {
	if len(id) != 11 {
		return 0, 0, 0, false
	}
	var x uint64
	for i := range 11 {
		p := strings.IndexByte(idAlphabet, id[i])
		if p < 0 {
			return 0, 0, 0, false
		}
		if i < 10 {
			x = x<<6 | uint64(p)
		} else {
			if p&3 != 0 {
				return 0, 0, 0, false
			}
			x = x<<4 | uint64(p>>2)
		}
	}
	key := w.feistel(x, true)
	if uint32(key) != uint32(mix(w.seed^(key&^0xffffffff))) {
		return 0, 0, 0, false
	}
	day, cohort, index = int(key>>48), int(key>>44&0xf), int(key>>32&0xfff)
	if cohort >= len(cohorts) || index >= cohorts[cohort].perDay {
		return 0, 0, 0, false
	}
	return day, cohort, index, true
}

func (w *world) feistel(x uint64, inverse bool) uint64 {
	l, r := uint32(x>>32), uint32(x)
	const rounds = 4
	for i := range rounds {
		round := i
		if inverse {
			round = rounds - 1 - i
		}
		f := func(v uint32) uint32 { return uint32(mix(uint64(v) ^ w.seed ^ uint64(round+1)*0x9e3779b97f4a7c15)) }
		if !inverse {
			l, r = r, l^f(r)
		} else {
			l, r = r^f(l), l
		}
	}
	return uint64(l)<<32 | uint64(r)
}

// rng is a generator for one thing, seeded from the world's seed and the
// thing's coordinates.
func (w *world) rng(parts ...uint64) *rand.Rand {
	h := w.seed
	for _, p := range parts {
		h = mix(h ^ p)
	}
	return rand.New(rand.NewPCG(h, mix(h^0xda942042e4dd58b5)))
}

// mix is SplitMix64's finalizer: a bijective scramble of 64 bits.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// hashString is FNV-1a.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// gauss maps a hash to a standard normal draw (Box-Muller).
func gauss(h uint64) float64 {
	u1 := max(unit(h), 1e-12)
	u2 := unit(mix(h))
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func pickWeighted(r *rand.Rand, ws []weight) string {
	var total float64
	for _, w := range ws {
		total += w.w
	}
	u := r.Float64() * total
	for _, w := range ws {
		if u < w.w {
			return w.v
		}
		u -= w.w
	}
	return ws[len(ws)-1].v
}

func clamp(x, lo, hi float64) float64 { return max(lo, min(hi, x)) }

// lru is a small least-recently-used cache; the caller locks.
type lru[K comparable, V any] struct {
	cap   int
	order *list.List // of K, most recent at the front
	items map[K]*list.Element
	vals  map[K]V
}

func newLRU[K comparable, V any](n int) *lru[K, V] {
	return &lru[K, V]{cap: n, order: list.New(), items: map[K]*list.Element{}, vals: map[K]V{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return c.vals[k], true
}

func (c *lru[K, V]) put(k K, v V) {
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		c.vals[k] = v
		return
	}
	c.items[k] = c.order.PushFront(k)
	c.vals[k] = v
	for c.order.Len() > c.cap {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(K))
		delete(c.vals, old.Value.(K))
	}
}
