"""Query set for searchtime/cli.py: python3 genq.py ARCHIVE SEED > q.json"""
import sqlite3, random, re, json, sys
random.seed(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
top = db.execute("select max(id) from videos").fetchone()[0]
ids = [random.randint(1, top) for _ in range(700)]
rows = []
for i in ids:
    r = db.execute("select title, channel_title from videos where id=?", (i,)).fetchone()
    if r: rows.append(r)
word = re.compile(r"\w+", re.U)
cjk = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]+")
out = []
def add(args, kind): out.append({"kind": kind, "args": args})
regions = "AU BR CA DE ES FR GB IN IT JP MX NL PT US".split()
k = 0
for t, ch in rows:
    ws = [w.lower() for w in word.findall(t) if not cjk.search(w) and len(w) > 1]
    cj = cjk.findall(t)
    k += 1
    if cj and not ws:
        if k % 3 == 0:
            s = random.choice(cj); n = random.choice([2,3,4]); st = random.randint(0, max(0, len(s)-n))
            add([s[st:st+n]], "cjk")
        continue
    if not ws: continue
    m = k % 10
    if m in (0,1,2):
        add([random.choice(ws)], "word")
    elif m in (3,4):
        a = random.sample(ws, min(2, len(ws)))
        add([" ".join(a)], "two")
    elif m == 5:
        if cj:
            s = random.choice(cj)
            n = random.choice([2,3,4])
            st = random.randint(0, max(0, len(s)-n))
            add([s[st:st+n]], "cjk")
        else:
            add([random.choice(ws), "--region", random.choice(regions)], "region")
    elif m == 6:
        add([random.choice(ws), "--region", random.choice(regions)], "region")
    elif m == 7:
        add([random.choice(ws), "--sort", "views"], "views")
    elif m == 8:
        add([random.choice(ws), "--sort", "recent"], "recent")
    elif m == 9:
        add([random.choice(ws), "--since", random.choice(["2025-05-22","2025-05-01","2025-03-01"])], "since")
    if len(out) >= 300: break
json.dump(out, sys.stdout)
