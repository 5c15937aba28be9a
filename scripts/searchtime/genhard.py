#!/usr/bin/env python3
"""A harder query set than genq.py's title words, written by a checker from
outside to find the shapes that break search's p99 (BENCHMARKS.md, issue 21,
"The stop of 2026-11-27 09:38"):
words from descriptions and tags, Zipf-weighted by document frequency (so
the words in 30-97% of videos come often), 1-4 words, quoted phrases,
accents added or kept, case changes, --channel substrings, --category ids,
region lists, --since durations and dates at the archive's edges, --limit
1/50/200/500, --sort views/recent with filters, CJK and Devanagari pieces of
descriptions, queries that match nothing, and combinations.

    python3 genhard.py ARCHIVE SEED N > q.json
"""
import collections
import json
import random
import sqlite3
import sys
import unicodedata

SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 21
N = int(sys.argv[3]) if len(sys.argv) > 3 else 500
rnd = random.Random(SEED)
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
top = db.execute("select max(id) from videos").fetchone()[0]


def is_word_char(c):
    cat = unicodedata.category(c)
    return cat[0] in "LNM" or cat == "Co"


def is_cjk(c):
    o = ord(c)
    return 0x3040 <= o <= 0x30FF or 0x4E00 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF


def runs(s, keep, closed_only=False):
    """The runs of s's characters that keep holds; closed_only leaves out a
    run that the end of s cuts off."""
    out, cur = [], []
    for c in s:
        if keep(c):
            cur.append(c)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur and not closed_only:
        out.append("".join(cur))
    return out


def tokens(s):
    """Words as FTS5 unicode61 with categories 'L* N* Co M*' splits them."""
    return runs(s, is_word_char)


def fold(w):
    return "".join(c for c in unicodedata.normalize("NFD", w.lower()) if unicodedata.category(c) != "Mn")


ids = rnd.sample(range(1, top + 1), 20000)
rows = []
for i in ids:
    r = db.execute("select title, tags, channel_title, description, category_id from videos where id=?", (i,)).fetchone()
    if r:
        rows.append(r)
df = collections.Counter()
forms = collections.defaultdict(collections.Counter)  # folded -> spellings seen
desc_runs, cjk_runs, deva_words = [], [], []
for t, tags, ch, desc, _ in rows:
    seen = set()
    for w in tokens(" ".join((t, tags, ch, desc))):
        if any(is_cjk(c) for c in w):
            continue
        f = fold(w)
        seen.add(f)
    df.update(sorted(seen))  # in a fixed order: Counter ties keep insertion order
    for w in tokens(desc) + tokens(tags):
        if not any(is_cjk(c) for c in w):
            forms[fold(w)][w.lower()] += 1
            if any(0x900 <= ord(c) <= 0x97F for c in w) and len(w) > 2:
                deva_words.append(w)
    desc_runs.append(tokens(desc))
    cjk_runs += runs(desc, is_cjk, closed_only=True)
# vocabulary from descriptions and tags only, by DF rank
vocab = [w for w, _ in df.most_common() if w in forms and len(w) > 1 and not w.isdigit()]
weights = [1.0 / (r + 1) ** 1.05 for r in range(len(vocab))]
cum = []
acc = 0
for x in weights:
    acc += x
    cum.append(acc)


def zipf():
    import bisect
    return vocab[bisect.bisect_left(cum, rnd.random() * acc)]


def spelled(f):
    """A spelling of the folded word f: an accented original when one exists,
    sometimes accents added, sometimes a case change."""
    s = f
    sp = forms.get(f)
    if sp and rnd.random() < 0.5:
        s = rnd.choice(list(sp))
    r = rnd.random()
    if r < 0.12:
        s = s.upper()
    elif r < 0.24:
        s = s.capitalize()
    elif r < 0.30:
        s = "".join(c.upper() if rnd.random() < .5 else c for c in s)
    return s


ACC = {"a": "áàâäã", "e": "éèêë", "i": "íïî", "o": "óöôõ", "u": "úüû", "n": "ñ", "c": "ç"}


def accented(f):
    cs = list(f)
    pos = [i for i, c in enumerate(cs) if c in ACC]
    for i in rnd.sample(pos, min(len(pos), rnd.choice([1, 2]))):
        cs[i] = rnd.choice(ACC[cs[i]])
    s = "".join(cs)
    return s.upper() if rnd.random() < .2 else s


def words(n):
    ws = []
    while len(ws) < n:
        w = zipf()
        if w not in ws:
            ws.append(w)
    return " ".join(spelled(w) for w in ws)


def phrase():
    for _ in range(50):
        ts = [t for t in rnd.choice(desc_runs) if not any(is_cjk(c) for c in t)]
        n = rnd.choice([2, 2, 3])
        if len(ts) >= n:
            st = rnd.randrange(len(ts) - n + 1)
            return '"%s"' % " ".join(ts[st:st + n])
    return '"gouflen pond"'


def cjk_piece():
    s = rnd.choice(cjk_runs)
    n = rnd.choice([2, 3, 4])
    st = rnd.randrange(max(1, len(s) - n + 1))
    return s[st:st + n]


chans = [r[0] for r in db.execute("select title from channels where id in (%s)" % ",".join(
    str(rnd.randint(1, 14771)) for _ in range(300)))]
common_suffixes = ["Vlogs", "Official", "TV", "Music", "Gaming", "News", "Channel", "チャンネル"]


def channel():
    r = rnd.random()
    if r < 0.3:
        return rnd.choice(common_suffixes)  # thousands of channels
    c = rnd.choice(chans)
    if r < 0.6:
        return c  # the whole title
    n = rnd.randint(3, max(3, min(8, len(c))))
    st = rnd.randrange(max(1, len(c) - n + 1))
    part = c[st:st + n].strip() or c
    return part.lower() if rnd.random() < .5 else part.upper()


REGIONS = "AU BR CA DE ES FR GB IN IT JP MX NL PT US".split()
CATS = [r[0] for r in db.execute("select distinct category_id from videos limit 50")]


def regions(k=None):
    k = k or rnd.choice([2, 3, 3, 4, 6, 14])
    return ",".join(rnd.sample(REGIONS, k))


# archive runs 2024-01-01 .. 2025-05-23; now is after it, so durations reach
# back into it only when long (600d) and match nothing when short (7d).
SINCE = ["2024-01-01", "2024-01-03", "2024-02-15", "2025-05-01", "2025-05-20", "2025-05-23", "2025-05-24",
         "7d", "24h", "560d", "600d", "700d", "1000d"]
out = []


def add(kind, q, *flags):
    out.append({"kind": kind, "args": [q] + list(flags)})


none_words = ["qqxjzv", "zzyzxq", "gouflenx", "xpondx", "ploxqar"]
plan = [
    ("w1", 12), ("w2", 10), ("w3", 6), ("w4", 4), ("phrase", 6), ("phrase+w", 4), ("accent", 5), ("case", 3),
    ("channel", 8), ("category", 6), ("regions", 8), ("since", 7), ("limit", 8), ("views", 6),
    ("views+reg", 8), ("views+since", 4), ("views+lim", 4), ("recent", 5), ("recent+reg", 3), ("cjk", 6), ("deva", 2),
    ("none", 4), ("combo", 12),
]
kinds = [k for k, n in plan for _ in range(n)]
while len(out) < N:
    k = rnd.choice(kinds)
    nw = rnd.choice([1, 1, 2, 2, 3, 4])
    if k == "w1":
        add(k, words(1))
    elif k == "w2":
        add(k, words(2))
    elif k == "w3":
        add(k, words(3))
    elif k == "w4":
        add(k, words(4))
    elif k == "phrase":
        add(k, phrase())
    elif k == "phrase+w":
        add(k, phrase() + " " + words(1))
    elif k == "accent":
        add(k, " ".join(accented(zipf()) for _ in range(rnd.choice([1, 1, 2]))))
    elif k == "case":
        add(k, words(nw).upper())
    elif k == "channel":
        add(k, words(rnd.choice([1, 1, 2])), "--channel", channel())
    elif k == "category":
        add(k, words(rnd.choice([1, 1, 2])), "--category", rnd.choice(CATS))
    elif k == "regions":
        add(k, words(rnd.choice([1, 1, 2])), "--region", regions())
    elif k == "since":
        add(k, words(rnd.choice([1, 1, 2])), "--since", rnd.choice(SINCE))
    elif k == "limit":
        add(k, words(rnd.choice([1, 1, 2])), "--limit", str(rnd.choice([1, 50, 200, 500])))
    elif k == "views":
        add(k, words(nw), "--sort", "views")
    elif k == "views+reg":
        add(k, words(rnd.choice([1, 1, 2])), "--sort", "views", "--region", regions(rnd.choice([1, 2, 3, 5, 14])))
    elif k == "views+since":
        add(k, words(1), "--sort", "views", "--since", rnd.choice(SINCE))
    elif k == "views+lim":
        add(k, words(rnd.choice([1, 1, 2])), "--sort", "views", "--limit", str(rnd.choice([1, 50, 200, 500])))
    elif k == "recent":
        add(k, words(nw), "--sort", "recent")
    elif k == "recent+reg":
        add(k, words(1), "--sort", "recent", "--region", regions())
    elif k == "cjk":
        q = cjk_piece()
        if rnd.random() < .3:
            q += " " + cjk_piece()
        if rnd.random() < .3:
            add(k, q, "--region", "JP")
        else:
            add(k, q)
    elif k == "deva":
        add(k, rnd.choice(deva_words) if deva_words else "क्रिकेट")
    elif k == "none":
        r = rnd.random()
        if r < .4:
            add(k, words(1) + " " + rnd.choice(none_words))
        elif r < .7:
            add(k, words(rnd.choice([1, 2])), "--channel", "nosuchchannelzz")
        else:
            add(k, rnd.choice(none_words), "--sort", rnd.choice(["views", "recent"]))
    elif k == "combo":
        f = []
        if rnd.random() < .5:
            f += ["--region", regions(rnd.choice([1, 2, 3]))]
        if rnd.random() < .4:
            f += ["--since", rnd.choice(SINCE)]
        if rnd.random() < .3:
            f += ["--channel", channel()]
        if rnd.random() < .3:
            f += ["--category", rnd.choice(CATS)]
        if rnd.random() < .5:
            f += ["--sort", rnd.choice(["views", "recent", "relevance"])]
        if rnd.random() < .4:
            f += ["--limit", str(rnd.choice([1, 50, 200, 500]))]
        q = phrase() + " " + words(1) if rnd.random() < .2 else words(nw)
        add(k, q, *f)
json.dump(out, sys.stdout, ensure_ascii=False, indent=0)
sys.stderr.write("%d queries; top words: %s\n" % (len(out), [(w, round(df[w] / len(rows), 2)) for w in vocab[:12]]))
