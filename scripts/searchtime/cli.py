#!/usr/bin/env python3
"""cli.py: time `ytrend search` as a process of its own per query, as a user
(or a check from outside) runs it: wall time per query and the children's
CPU (getrusage), alternating archives round by round. BENCHMARKS.md,
issue 21 ("The archive compacted after a large import").

    python3 scripts/searchtime/cli.py YTREND QUERIES.json N ARCHIVE...

QUERIES.json is genq.py's output; the first N queries are run on each
archive, two rounds.
"""
import json
import resource
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    ytrend, queries, n, archives = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    qs = json.load(open(queries))[:n]
    for _ in range(2):
        for db in archives:
            walls = []
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            for q in qs:
                t = time.perf_counter()
                subprocess.run([ytrend, "--db", db, "search"] + q["args"] + ["--limit", "20"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                walls.append((time.perf_counter() - t) * 1000)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            walls.sort()
            cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000 / len(qs)
            print("%s wall p50 %.1f p90 %.1f p99 %.1f ms, CPU %.1f ms a query" % (
                db, walls[len(walls) // 2], walls[int(len(walls) * .9)], walls[int(len(walls) * .99)], cpu))


if __name__ == "__main__":
    main()
