package sim

import (
	"encoding/base64"
	"encoding/binary"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ytrend/ytrend/regions"
)

// The world's content: channels, videos and their text, generated from a
// seed so that a video's ID alone (see ids.go) regenerates it.

// genChannels makes cohort k's channels.
func (w *world) genChannels(k int) []*channel {
	spec := cohorts[k]
	lex := lexicons()[spec.lang]
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
