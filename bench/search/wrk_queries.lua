-- wrk script: GET /api/search?q=<query>&k=10, cycling through the queries of
-- a file (one per line), so that the server encodes a different text each time;
-- a second argument is a filter every query carries (&filter=...).
--   wrk -t1 -c8 -d20s -s bench/search/wrk_queries.lua http://127.0.0.1:8600 -- queries.txt
--   wrk ... -- queries.txt 'bucket<50'
local queries = {}
local n = 0

local function encode(s)
  return (s:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function init(args)
  local filter = ""
  if args[2] and #args[2] > 0 then filter = "&filter=" .. encode(args[2]) end
  for line in io.lines(args[1]) do
    if #line > 0 then
      queries[#queries + 1] = "/api/search?k=10" .. filter .. "&q=" .. encode(line)
    end
  end
end

function request()
  n = n + 1
  return wrk.format("GET", queries[(n % #queries) + 1])
end

-- No response() callback: wrk then skips running Lua per answer, and counts
-- non-2xx/3xx answers itself (summary.errors.status).
function done(summary, latency, requests)
  io.write(string.format("non-200 answers: %d\n", summary.errors.status))
end
