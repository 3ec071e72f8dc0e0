-- Writes ARGV[2] under KEYS[1] if its version is still ARGV[1] ('0': no value there), with a
-- time to live of ARGV[3] ms ('0': none). The new version is the server's time in microseconds,
-- or one more than the last where that is not larger, so a value that expired and was written
-- again never repeats a version an old writer holds. Answers the new version, or 0 when another
-- writer got there first.
local cur = redis.call('HGET', KEYS[1], 'n') or '0'
if cur ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
local n = tonumber(t[1]) * 1000000 + tonumber(t[2])
if n <= tonumber(cur) then n = tonumber(cur) + 1 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'n', string.format('%d', n))
if ARGV[3] == '0' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return n
