-- The Redis work of one Spring Cloud Gateway RedisRateLimiter decision, reproduced for the
-- benchmark: its request_rate_limiter.lua (spring-cloud-gateway-server, Apache License 2.0,
-- Copyright the original author or authors) reads a token bucket's hash (HGET tokens, HGET
-- timestamp), refills it, takes the requested tokens when there are enough, writes both fields
-- back (HSET, HSET) and sets the hash's time to live (EXPIRE). One call per limit.
-- KEYS[1] the bucket; ARGV: rate (tokens a second), capacity, now (s), requested.
local key = KEYS[1]
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])
local ttl = math.floor(capacity / rate * 2)
local tokens = tonumber(redis.call('HGET', key, 'tokens')) or capacity
local refreshed = tonumber(redis.call('HGET', key, 'timestamp')) or 0
local filled = math.min(capacity, tokens + math.max(0, now - refreshed) * rate)
local allowed = 0
if filled >= requested then
  filled = filled - requested
  allowed = 1
end
if ttl > 0 then
  redis.call('HSET', key, 'tokens', filled)
  redis.call('HSET', key, 'timestamp', now)
  redis.call('EXPIRE', key, ttl)
end
return { allowed, filled }
