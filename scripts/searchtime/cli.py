"""Times `ytrend search` from outside, one process per query: DB=ARCHIVE python3 cli.py YTREND q.json"""
import json, os, resource, subprocess, sys, time, statistics, collections
binp, qf = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
q = json.load(open(qf))
res = collections.defaultdict(list)
for x in q:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([binp, "--db", os.environ["DB"], "search", "--limit", "20", *extra, *x["args"]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    d = (time.perf_counter() - t) * 1000
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    c = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000
    res["cpu:" + ("views" if x["kind"] == "views" else "relevance" if x["kind"] != "recent" else "recent")].append(c)
    if p.returncode != 0: print("ERR", x, p.stderr[:200]); continue
    res[x["kind"]].append(d); res["ALL"].append(d)
    if x["kind"] != "views" and x["kind"] != "recent": res["relevance"].append(d)
def pct(a, p): a = sorted(a); return a[min(len(a)-1, int(p*len(a)))]
for k, v in sorted(res.items()):
    print(f"{k:10s} n={len(v):3d} p50={pct(v,.5):7.1f} p90={pct(v,.9):7.1f} p99={pct(v,.99):7.1f} max={max(v):7.1f}")
