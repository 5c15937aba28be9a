#!/usr/bin/env python3
"""Targeted exactness set: tie-heavy orders (recent: day-granular sightings;
views: repeated counts), limits 1..500, since at the archive's exact
sighting stamps, region lists, channel filters under and over 64 channels,
categories, and odd texts. Its words are gencsv's (scripts/gencsv), so it
fits an archive imported from gencsv files. BENCHMARKS.md, issue 21 ("The
stop of 2026-11-27 09:38").

    python3 genedge.py ARCHIVE SEED > edge.json
"""
import json, random, sqlite3, sys
rnd = random.Random(int(sys.argv[2]))
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
WORDS = {"common": ["gouflen", "pond", "pamas", "box", "zun"], "mid": ["stil", "giohea", "official", "prèmex", "nigrer", "flai"],
         "rare": ["praiwivom", "clarakix", "huplofeand", "jelut", "pachioprout"]}
R = "AU BR CA DE ES FR GB IN IT JP MX NL PT US".split()
SINCE = ["2025-05-23", "2025-05-22", "2025-05-22T12:00", "2025-05-23T00:00:01Z", "2024-01-01", "2024-06-30", "2025-01-01", "600d", "7d"]
CH = ["チャンネル", "Vlogs", "Official", "TV", "a", "ou", "Music"]
# Sampled with the seed, not ORDER BY random(): the same archive and seed
# give the same set.
channels = db.execute("select title, channel_id from channels order by id").fetchall()
chans = [t for t, _ in rnd.sample(channels, min(40, len(channels)))]
chid = [c for _, c in rnd.sample(channels, min(5, len(channels)))]
out = []
def add(k, *a): out.append({"kind": k, "args": list(a)})
def w(): return rnd.choice(WORDS[rnd.choice(list(WORDS))])
for sort in ["recent", "views", "relevance"]:
    for _ in range(90):
        f = ["--sort", sort, "--limit", str(rnd.choice([1, 2, 20, 50, 200, 500]))]
        r = rnd.random()
        if r < .5: f += ["--region", ",".join(rnd.sample(R, rnd.choice([1, 1, 2, 5, 14])))]
        if rnd.random() < .4: f += ["--since", rnd.choice(SINCE)]
        if rnd.random() < .25: f += ["--channel", rnd.choice(CH + chans + chid)]
        if rnd.random() < .2: f += ["--category", rnd.choice(["1", "2", "10", "28", "99"])]
        q = " ".join(w() for _ in range(rnd.choice([1, 1, 2, 3])))
        add("edge-" + sort, q, *f)
odd = ["gouflen gouflen", '"gouflen pond" gouflen', "GOUFLÉN gouflen", "gouflen-pond", "gouflen's", "!!!", "🤍gouflen🤍",
       "a", "2024", "gouflen pond pamas box gragreaken zun plogesot flaivust vopre tun", "チカマ gouflen", '"pond"',
       '""', '"gouflen', "gouflen OR pond", "gouflen*", "NOT pond", "title:gouflen", "gouflen AND", "ǅemal", "ＧＯＵＦＬＥＮ",
       "gouﬂen", "straße", "İstanbul", "ı", "Ⅻ", "½", "gouflen\u0301", "e\u0301", "x" * 300]
for q in odd:
    for f in ([], ["--sort", "views"], ["--sort", "recent", "--limit", "500"], ["--region", "US,JP", "--limit", "1"]):
        add("odd", q, *f)
json.dump(out, sys.stdout, ensure_ascii=False)
