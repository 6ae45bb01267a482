-- wrk: a durable POST of scripts/bench-post.json (its path in BENCH_POST_BODY) with the bench's token.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer bench-token"
local file = assert(io.open(os.getenv("BENCH_POST_BODY"), "rb"))
wrk.body = (file:read("*a"):gsub("%s+$", ""))
file:close()
