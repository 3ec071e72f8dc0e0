-- Refunds and releases: subtracts ARGV[i] from KEYS[i]; a key left at zero or below is deleted (an
-- absent key counts zero), a key Redis does not hold stays absent, and any other keeps its expiry.
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local v = redis.pcall('DECRBY', KEYS[i], ARGV[i])
    if type(v) == 'table' then
      -- Refused (an ACL without DECRBY): the count stays as it was, and the caller sees why.
      return redis.error_reply('DECRBY refused: ' .. tostring(v.err))
    end
    if v <= 0 then
      -- Nothing counted is left: the key goes, as if never written. A refused request's counter of
      -- an identity new to Redis (a minted API key) then takes no memory, and cannot crowd out
      -- the counters of others.
      -- A user without DEL keeps the key, at zero.
      if type(redis.pcall('DEL', KEYS[i])) == 'table' and v < 0 then
        redis.call('SET', KEYS[i], '0', 'KEEPTTL')
      end
    end
  end
end
return 0
