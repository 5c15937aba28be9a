-- wrk script: requests the paths of a file (one a line, from loadmix), each
-- thread its own share of them in order, wrapping round at the end, with
-- gzip as browsers ask. Counts answers by class, since wrk itself reports
-- only non-2xx/3xx as a total.
--   wrk -t2 -c50 -d30s --latency -s scripts/loadmix/paths.lua URL -- FILE [THREADS]

local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  -- args: FILE [THREADS]; thread k of n takes lines k+1, k+1+n, ...
  local all = {}
  for line in io.lines(args[1]) do
    all[#all + 1] = line
  end
  local n = tonumber(args[2] or "2")
  paths = {}
  for k = 1 + (id or 0), #all, n do
    paths[#paths + 1] = all[k]
  end
  i = 0
  s2, s3, s4, s5 = 0, 0, 0, 0
end

function request()
  i = i + 1
  if i > #paths then i = 1 end
  return wrk.format("GET", paths[i], { ["Accept-Encoding"] = "gzip" })
end

function response(status, headers, body)
  if status < 300 then s2 = s2 + 1
  elseif status < 400 then s3 = s3 + 1
  elseif status < 500 then s4 = s4 + 1
  else s5 = s5 + 1 end
end

function done(summary, latency, requests)
  local s = { 0, 0, 0, 0 }
  for _, t in ipairs(threads) do
    s[1] = s[1] + (t:get("s2") or 0)
    s[2] = s[2] + (t:get("s3") or 0)
    s[3] = s[3] + (t:get("s4") or 0)
    s[4] = s[4] + (t:get("s5") or 0)
  end
  io.write(string.format("answers: 2xx %d, 3xx %d, 4xx %d, 5xx %d\n", s[1], s[2], s[3], s[4]))
  io.write(string.format("p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, %d requests, %.0f req/s\n",
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    summary.requests, summary.requests / (summary.duration / 1e6)))
end
