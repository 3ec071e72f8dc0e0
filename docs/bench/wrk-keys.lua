-- 1,000 API keys in turn; a response other than 200 is counted by wrk as non-2xx
local i = 0
request = function()
  i = (i + 1) % 1000
  return wrk.format("GET", "/api/v1/report", { ["X-Api-Key"] = "key-" .. i })
end
