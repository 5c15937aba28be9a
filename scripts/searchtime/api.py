#!/usr/bin/env python3
"""api.py: time searches over ytrend serve's JSON API, one after another on
one keep-alive connection, as a client from outside sees them (wall time
per request). BENCHMARKS.md, issue 21 ("A walk's per-match test, and the
hits' category names").

    python3 scripts/searchtime/api.py HOST:PORT QUERIES.json [LIMIT]

QUERIES.json is genq.py's output; a query that repeats an earlier one is
left out, so that none is answered from serve's response cache. LIMIT
(default 20) is the API's limit parameter: a second pass with another
limit asks for pages the cache has not seen (serve searches limit+1).
"""
import http.client
import json
import sys
import time
import urllib.parse


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    host, port = sys.argv[1].rsplit(":", 1)
    limit = sys.argv[3] if len(sys.argv) > 3 else "20"
    seen, qs = set(), []
    for q in json.load(open(sys.argv[2])):
        key = json.dumps(q["args"])
        if key not in seen:
            seen.add(key)
            qs.append(q)
    conn = http.client.HTTPConnection(host, int(port))
    times = {}
    for q in qs:
        params = {"q": q["args"][0], "limit": limit}
        rest = q["args"][1:]
        for flag, value in zip(rest[::2], rest[1::2]):
            params[flag.lstrip("-")] = value
        t = time.perf_counter()
        conn.request("GET", "/api/v1/search?" + urllib.parse.urlencode(params))
        resp = conn.getresponse()
        body = resp.read()
        ms = (time.perf_counter() - t) * 1000
        if resp.status != 200:
            sys.exit("%d for %s: %s" % (resp.status, params, body[:200]))
        times.setdefault("ALL", []).append(ms)
        times.setdefault(q["kind"], []).append(ms)
    for kind in sorted(times):
        v = sorted(times[kind])
        at = lambda f: v[min(len(v) - 1, int(f * len(v)))]
        print("%-8s n=%4d p50=%7.2f p90=%7.2f p99=%7.2f" % (kind, len(v), at(.5), at(.9), at(.99)))


if __name__ == "__main__":
    main()
