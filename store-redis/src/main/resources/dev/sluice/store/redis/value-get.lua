-- A shared value and its version: {text, version}, or an empty answer when there is none.
local v = redis.call('HMGET', KEYS[1], 'v', 'n')
if not v[1] then return {} end
return {v[1], v[2]}
