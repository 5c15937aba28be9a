// Package synth generates deterministic, realistic-looking trending data for
// tests and benchmarks of the archive: a Zipf-distributed vocabulary of about
// 20,000 Latin-script words (a few with accents), smaller Devanagari and
// Japanese vocabularies, channels of varying popularity, and trending charts
// in which most videos are new and the rest are re-seen with grown statistics
// and unchanged text.
//
// Everything is a pure function of the seed and an index, so the n-th video is
// the same whatever order it is asked for in, and an archive built twice from
// the same seed is identical. Change [Version] whenever the output changes:
// benchmark archives are cached on disk under it.
package synth

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ytrend/ytrend/regions"

	"github.com/ytrend/ytrend/store"
)

// Version identifies the generator's output. Bump it when anything a
// generated archive contains would change.
const Version = 2

// Script is the writing system of a generated video.
type Script int

const (
	Latin Script = iota
	Devanagari
	Japanese
	Chinese
)

// Config tunes a Generator. The zero value of a field means its default.
type Config struct {
	Seed       uint64
	Words      int     // Latin vocabulary size (default 20,000)
	ZipfS      float64 // Zipf exponent, > 1 (default 1.07, close to natural text)
	Channels   int     // channels per script (default 4,000)
	Devanagari float64 // share of Devanagari videos (default 0.08)
	Japanese   float64 // share of Japanese videos (default 0.08)
	Chinese    float64 // share of Chinese videos (default 0.04)
	Start      time.Time
	// RunEvery is the simulated time between two chart fetches (default 1h).
	RunEvery time.Duration
	// Reseen is the share of a chart made of videos already seen (default 0.3).
	Reseen float64
}

// Generator produces videos, charts and queries. It is safe for concurrent
// use: all methods only read it.
type Generator struct {
	cfg      Config
	latin    []string // by Zipf rank
	deva     []string
	jpn      []string
	zho      []string
	channels [4][]channel
}

type channel struct{ id, title string }

// Regions are the chart regions synth uses, most Latin-script first.
var Regions = []regions.Code{"US", "GB", "DE", "FR", "BR", "PT", "MX", "ES", "IT", "CA", "AU", "NL", "IN", "JP"}

// New builds a generator; building the vocabularies takes a few milliseconds.
func New(cfg Config) *Generator {
	if cfg.Words == 0 {
		cfg.Words = 20000
	}
	if cfg.ZipfS == 0 {
		cfg.ZipfS = 1.07
	}
	if cfg.Channels == 0 {
		cfg.Channels = 4000
	}
	if cfg.Devanagari == 0 {
		cfg.Devanagari = 0.08
	}
	if cfg.Japanese == 0 {
		cfg.Japanese = 0.08
	}
	if cfg.Chinese == 0 {
		cfg.Chinese = 0.04
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if cfg.RunEvery == 0 {
		cfg.RunEvery = time.Hour
	}
	if cfg.Reseen == 0 {
		cfg.Reseen = 0.3
	}
	g := &Generator{cfg: cfg}
	r := g.rng(0xb0c4b, 0)
	g.latin = vocabulary(r, cfg.Words, latinWord)
	g.deva = vocabulary(r, 3000, devanagariWord)
	g.jpn = vocabulary(r, 3000, japaneseWord)
	g.zho = vocabulary(r, 3000, chineseWord)
	for s := Latin; s <= Chinese; s++ {
		g.channels[s] = make([]channel, cfg.Channels)
		for i := range g.channels[s] {
			g.channels[s][i] = g.channel(s, i)
		}
	}
	return g
}

// rng returns the random stream for one purpose and index.
func (g *Generator) rng(purpose, i uint64) *rand.Rand {
	return rand.New(rand.NewPCG(g.cfg.Seed^purpose*0x9e3779b97f4a7c15, i))
}

func (g *Generator) zipf(r *rand.Rand, n int) *rand.Zipf {
	return rand.NewZipf(r, g.cfg.ZipfS, 1, uint64(n-1))
}

// Words returns the Latin vocabulary, most frequent first.
func (g *Generator) Words() []string { return g.latin }

// Word returns the Latin word of Zipf rank i (0 is the most frequent).
func (g *Generator) Word(i int) string { return g.latin[i] }

func vocabulary(r *rand.Rand, n int, word func(*rand.Rand) string) []string {
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		w := word(r)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

var (
	onsets  = strings.Fields("b c d f g h j k l m n p r s t v w z br ch cl dr fl gr pl pr sh st th tr")
	vowels  = strings.Fields("a e i o u a e i o u ai ea ou io")
	accents = strings.Fields("é è á ã ô ü ö ç ñ í")
	codas   = []string{"", "", "", "n", "r", "s", "l", "m", "t", "x", "nd", "st"}
)

func latinWord(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(3) {
		b.WriteString(onsets[r.IntN(len(onsets))])
		if r.IntN(25) == 0 {
			b.WriteString(accents[r.IntN(len(accents))])
		} else {
			b.WriteString(vowels[r.IntN(len(vowels))])
		}
	}
	b.WriteString(codas[r.IntN(len(codas))])
	return b.String()
}

var (
	devaConsonants = []rune("कखगघचछजझटडतथदधनपफबभमयरलवशसह")
	devaMatras     = []rune("ािीुूेैोौ")
)

const virama = '्'

// devanagariWord builds 2-4 syllables of consonant (+ conjunct) + vowel sign,
// so words contain the combining marks that a tokenizer without M* splits.
func devanagariWord(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(3) {
		b.WriteRune(devaConsonants[r.IntN(len(devaConsonants))])
		if r.IntN(5) == 0 {
			b.WriteRune(virama)
			b.WriteRune(devaConsonants[r.IntN(len(devaConsonants))])
		}
		if r.IntN(4) != 0 {
			b.WriteRune(devaMatras[r.IntN(len(devaMatras))])
		}
	}
	return b.String()
}

var (
	kanji    = []rune("東京天気予報大阪日本新年音楽映画動画生活料理旅行世界最強試合選手野球放送速報話題人気実況解説公式限定特集発表最新情報海外国内今日明日")
	hiragana = []rune("のはがをにでとやもかなよね")
	katakana = []rune("アイウエオカキクケコサシスセソタチツテトナニヌネノマミムメモラリルレロン")
)

// hanzi are common simplified Chinese characters.
var hanzi = []rune("上海北京中国美食旅行视频音乐电影游戏新闻体育足球篮球直播今天明天生活搞笑教程手机科技汽车明星综艺小笼包生煎火锅烧烤早餐")

// chineseWord builds a two- or three-character word; Chinese text joins
// them without spaces.
func chineseWord(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(2) {
		b.WriteRune(hanzi[r.IntN(len(hanzi))])
	}
	return b.String()
}

// japaneseWord builds a kanji compound, a katakana loanword or either with a
// particle; Japanese titles join them without spaces.
func japaneseWord(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(4) == 0 {
		for range 2 + r.IntN(4) {
			b.WriteRune(katakana[r.IntN(len(katakana))])
		}
	} else {
		for range 2 + r.IntN(2) {
			b.WriteRune(kanji[r.IntN(len(kanji))])
		}
	}
	if r.IntN(3) == 0 {
		b.WriteRune(hiragana[r.IntN(len(hiragana))])
	}
	return b.String()
}

var channelSuffixes = []string{"", "", " TV", " Official", " Music", " Gaming", " News", " Vlogs"}

func (g *Generator) channel(s Script, i int) channel {
	r := g.rng(0xc4a77e1, uint64(s)<<32|uint64(i))
	var title string
	switch s {
	case Devanagari:
		title = g.deva[r.IntN(len(g.deva))] + " " + g.deva[r.IntN(len(g.deva))]
	case Japanese:
		title = g.jpn[r.IntN(len(g.jpn))] + g.jpn[r.IntN(len(g.jpn))] + "チャンネル"
	case Chinese:
		title = g.zho[r.IntN(len(g.zho))] + g.zho[r.IntN(len(g.zho))] + "频道"
	default:
		// Channel names use mid-frequency words so that a channel filter
		// does not also match half the archive's text.
		var ws []string
		for range 1 + r.IntN(2) {
			w := g.latin[200+r.IntN(len(g.latin)-200)]
			ws = append(ws, strings.ToUpper(w[:1])+w[1:])
		}
		title = strings.Join(ws, " ") + channelSuffixes[r.IntN(len(channelSuffixes))]
	}
	return channel{id: "UC" + idString(g.cfg.Seed, 0xc4a, uint64(s)<<32|uint64(i), 22), title: title}
}

// idString derives a base64url id of length n from the seed and an index.
func idString(seed, purpose, i uint64, n int) string {
	r := rand.New(rand.NewPCG(seed^purpose, i))
	var raw [24]byte
	for j := 0; j < len(raw); j += 8 {
		binary.LittleEndian.PutUint64(raw[j:], r.Uint64())
	}
	return base64.RawURLEncoding.EncodeToString(raw[:])[:n]
}

// VideoID is the YouTube-style id of the n-th video.
func (g *Generator) VideoID(n int) string { return idString(g.cfg.Seed, 0x71de0, uint64(n), 11) }

// ScriptOf is the script of the n-th video.
func (g *Generator) ScriptOf(n int) Script {
	r := g.rng(0x5c41, uint64(n))
	switch f := r.Float64(); {
	case f < g.cfg.Devanagari:
		return Devanagari
	case f < g.cfg.Devanagari+g.cfg.Japanese:
		return Japanese
	case f < g.cfg.Devanagari+g.cfg.Japanese+g.cfg.Chinese:
		return Chinese
	}
	return Latin
}

var categories = []string{"1", "2", "10", "15", "17", "20", "22", "23", "24", "25", "26", "28"}

// Video returns the n-th distinct video, first published shortly before it
// would first trend. Its statistics are those of its first sighting.
func (g *Generator) Video(n int) store.Video {
	r := g.rng(0x71de0, uint64(n))
	s := g.ScriptOf(n)
	z := g.zipf(r, len(g.latin))
	latin := func() string { return g.latin[z.Uint64()] }
	word := latin
	sep := " "
	switch s {
	case Devanagari:
		dz := g.zipf(r, len(g.deva))
		word = func() string { return g.deva[dz.Uint64()] }
	case Japanese:
		jz := g.zipf(r, len(g.jpn))
		word = func() string { return g.jpn[jz.Uint64()] }
		sep = ""
	case Chinese:
		cz := g.zipf(r, len(g.zho))
		word = func() string { return g.zho[cz.Uint64()] }
		sep = ""
	}
	words := func(n int, w func() string, sep string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = w()
		}
		return strings.Join(parts, sep)
	}

	title := words(5+r.IntN(8), word, sep)
	if s == Latin {
		title = strings.ToUpper(title[:1]) + title[1:]
	}
	// Descriptions of non-Latin videos mix the script with Latin words, as
	// real ones do (links, English hashtags, credits). Japanese and Chinese
	// write sentences of several words without a space, ending in 。: a
	// whole sentence is one run that only grams make searchable.
	unspaced := s == Japanese || s == Chinese
	var desc string
	if unspaced {
		// Fewer, longer parts: about the same text length as the others.
		desc = words(10+r.IntN(40), func() string {
			if r.IntN(3) > 0 {
				return words(3+r.IntN(6), word, "") + "。"
			}
			return latin()
		}, " ")
	} else {
		desc = words(30+r.IntN(121), func() string {
			if s != Latin && r.IntN(2) == 0 {
				return word()
			}
			return latin()
		}, " ")
	}
	tags := make([]string, 5)
	for i := range tags {
		switch {
		case unspaced && i < 2:
			tags[i] = words(2+r.IntN(2), word, "") // compounds without spaces
		case s != Latin && i < 2:
			tags[i] = word()
		default:
			tags[i] = latin()
		}
	}
	cz := g.zipf(r, g.cfg.Channels)
	ch := g.channels[s][cz.Uint64()]

	published := g.cfg.Start.Add(time.Duration(n) * g.cfg.RunEvery / 140).Add(-time.Duration(r.IntN(72*3600)) * time.Second)
	views := int64(math.Exp(8 + 3*r.Float64() + r.NormFloat64()))
	likes := views / int64(20+r.IntN(60))
	comments := likes / int64(5+r.IntN(20))
	v := store.Video{
		ID:              g.VideoID(n),
		Title:           title,
		Description:     desc,
		ChannelID:       ch.id,
		ChannelTitle:    ch.title,
		Tags:            tags,
		CategoryID:      categories[r.IntN(len(categories))],
		PublishedAt:     published.Truncate(time.Second),
		Duration:        time.Duration(30+r.IntN(2*3600)) * time.Second,
		DefaultLanguage: [...]string{"en", "hi", "ja", "zh"}[s],
		ThumbnailURL:    "https://i.ytimg.com/vi/" + g.VideoID(n) + "/hqdefault.jpg",
		Views:           &views,
		Likes:           &likes,
		Comments:        &comments,
	}
	if r.IntN(20) == 0 { // some owners hide likes or comments
		v.Likes = nil
	}
	if r.IntN(20) == 0 {
		v.Comments = nil
	}
	return v
}

// Reseen returns the n-th video as seen again at its k-th later sighting:
// same text, grown statistics.
func (g *Generator) Reseen(n, k int) store.Video {
	v := g.Video(n)
	grow := func(p *int64) *int64 {
		if p == nil {
			return nil
		}
		x := *p + *p*int64(k)/3 + int64(k)
		return &x
	}
	v.Views, v.Likes, v.Comments = grow(v.Views), grow(v.Likes), grow(v.Comments)
	return v
}

// Run is one simulated chart fetch: a region's chart at one time, as pages
// of 50 (RunID left zero for the caller to fill in).
type Run struct {
	Region regions.Code
	At     time.Time
	Pages  []store.Page
	New    int // videos in the run that were never seen before
}

// Runs simulates chart fetches until videos distinct videos have been seen.
// Each run is one region's top 200 (four pages of 50): about 1-Reseen of it
// new videos, the rest re-seen recent ones with unchanged text.
func (g *Generator) Runs(videos int) iter.Seq[Run] {
	return func(yield func(Run) bool) {
		const chart, pageSize = 200, 50
		next := 0             // next new video index
		seen := map[int]int{} // video -> sightings so far
		var recent []int      // ring of recently seen videos
		r := g.rng(0x4a5, 0)
		for run := 0; next < videos; run++ {
			region := Regions[run%len(Regions)]
			at := g.cfg.Start.Add(time.Duration(run) * g.cfg.RunEvery)
			var ids []int
			var vs []store.Video
			inRun := map[int]bool{}
			nNew := 0
			for len(vs) < chart && (next < videos || len(recent) > 0) {
				if next < videos && (len(recent) < 1000 || r.Float64() >= g.cfg.Reseen) {
					ids = append(ids, next)
					vs = append(vs, g.Video(next))
					seen[next] = 1
					inRun[next] = true
					next++
					nNew++
					continue
				}
				if next >= videos {
					break
				}
				n := recent[r.IntN(len(recent))]
				if inRun[n] {
					continue
				}
				inRun[n] = true
				ids = append(ids, n)
				vs = append(vs, g.Reseen(n, seen[n]))
				seen[n]++
			}
			for _, n := range ids {
				if seen[n] == 1 {
					recent = append(recent, n)
				}
			}
			if len(recent) > 4000 {
				for _, n := range recent[:len(recent)-4000] {
					delete(seen, n)
				}
				recent = append(recent[:0], recent[len(recent)-4000:]...)
			}
			out := Run{Region: region, At: at, New: nNew}
			for p := 0; p*pageSize < len(vs); p++ {
				end := min(len(vs), (p+1)*pageSize)
				out.Pages = append(out.Pages, store.Page{
					Region:    region,
					FetchedAt: at.Add(time.Duration(p) * time.Second),
					Kind:      store.PageChart,
					FirstRank: p*pageSize + 1,
					Videos:    vs[p*pageSize : end],
					Units:     int64(p+1) * 3,
				})
			}
			if !yield(out) {
				return
			}
		}
	}
}

// Queries returns n search queries whose words are drawn at corpus
// frequency (so common words dominate, as they do in what people type):
// alternately one and two words, about one in ten in Devanagari or Japanese.
func (g *Generator) Queries(n int) []string {
	r := g.rng(0x9e77, 0)
	lz, dz, jz, cz := g.zipf(r, len(g.latin)), g.zipf(r, len(g.deva)), g.zipf(r, len(g.jpn)), g.zipf(r, len(g.zho))
	out := make([]string, n)
	for i := range out {
		pick := func() string {
			switch r.IntN(20) {
			case 0:
				return g.deva[dz.Uint64()]
			case 1:
				return g.jpn[jz.Uint64()]
			case 2:
				return g.zho[cz.Uint64()]
			}
			return g.latin[lz.Uint64()]
		}
		q := pick()
		if i%2 == 1 {
			q += " " + pick()
		}
		out[i] = q
	}
	return out
}

// String describes the configuration; it keys cached benchmark archives.
func (g *Generator) String() string {
	c := g.cfg
	return fmt.Sprintf("synth-v%d-seed%d-w%d-s%g-c%d-d%g-j%g-z%g-r%g", Version, c.Seed, c.Words, c.ZipfS, c.Channels, c.Devanagari, c.Japanese, c.Chinese, c.Reseen)
}
