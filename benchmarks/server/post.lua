-- wrk script for the example inference server and its peers (load.sh): POSTs one body file with its X-Shape.
-- Environment: BODY (file), SHAPE ("ROWS,16"), ROUTE ("": POST /classify; "numpy": /classify?route=numpy), MALFORMED_EVERY (0: none; N: every
-- Nth request of a connection sends a wrong X-Shape, which the server answers 400).
-- At the end it prints one line: RESULT requests seconds rps p50_ms p99_ms non2xx errors.
local body = assert(io.open(os.getenv("BODY"), "rb")):read("*a")
local shape = os.getenv("SHAPE")
local route = os.getenv("ROUTE") or ""
local every = tonumber(os.getenv("MALFORMED_EVERY") or "0")
local path = route == "" and "/classify" or ("/classify?route=" .. route)
local good, bad
local count = 0

function init(args)
  good = wrk.format("POST", path, {["X-Shape"] = shape, ["Content-Type"] = "application/octet-stream"}, body)
  bad = wrk.format("POST", path, {["X-Shape"] = "1,15", ["Content-Type"] = "application/octet-stream"}, body)
end

function request()
  count = count + 1
  if every > 0 and count % every == 0 then
    return bad
  end
  return good
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT requests=%d seconds=%.3f rps=%.1f p50_ms=%.3f p99_ms=%.3f non2xx=%d errors=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, e.status, e.connect + e.read + e.write + e.timeout))
end
