-- Refunds and releases: subtracts ARGV[i] from KEYS[i], never below zero; a key Redis does not
-- hold stays absent, and a key keeps its expiry.
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local v = redis.pcall('DECRBY', KEYS[i], ARGV[i])
    if type(v) == 'table' then
      -- Refused (an ACL without DECRBY): the count stays as it was, and the caller sees why.
      return redis.error_reply('DECRBY refused: ' .. tostring(v.err))
    end
    if v < 0 then
      redis.call('SET', KEYS[i], '0', 'KEEPTTL')
    end
  end
end
return 0
