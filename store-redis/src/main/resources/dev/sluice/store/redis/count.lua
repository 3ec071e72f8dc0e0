-- One decision's counters, atomically, in one call. ARGV holds five values per counter:
--   kind ('w' a window whose previous window is read, 'c' a window whose previous count the
--   caller knows, 'r' a running counter), delta, ttl in ms, floor, ceiling.
-- KEYS holds the counter's key, then, for 'w', its previous window's key.
-- Answers two values per counter: the new count, then the previous window's count (0 for 'c'
-- and 'r'). Counts below 2^53 come back as integers, larger ones as decimal text: Lua's numbers
-- are doubles, so 64-bit values (a token bucket's arrival time in ns) are added exactly on
-- (high, low) halves of nine digits.
local function num(s)
  local n = #s
  if n <= 9 then return 0, tonumber(s) end
  return tonumber(string.sub(s, 1, n - 9)), tonumber(string.sub(s, n - 8))
end
local function text(h, l)
  if h == 0 then return string.format('%d', l) end
  return string.format('%d%09d', h, l)
end
local MAXH, MAXL = 9223372036, 854775807
local EXACT = 9007199254740992
local out, k = {}, 1
for a = 1, #ARGV, 5 do
  local kind, delta, ttl = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  local key = KEYS[k]
  k = k + 1
  if kind == 'r' then
    -- v = max(stored, floor) + delta; stored only when v <= ceiling, reported either way.
    local vh, vl = num(ARGV[a + 3])
    local s = redis.call('GET', key)
    if s then
      local sh, sl = num(s)
      if sh > vh or (sh == vh and sl > vl) then vh, vl = sh, sl end
    end
    local dh, dl = num(delta)
    vh, vl = vh + dh, vl + dl
    if vl >= 1000000000 then vh, vl = vh + 1, vl - 1000000000 end
    if vh > MAXH or (vh == MAXH and vl > MAXL) then vh, vl = MAXH, MAXL end
    local v = text(vh, vl)
    local ch, cl = num(ARGV[a + 4])
    if vh < ch or (vh == ch and vl <= cl) then
      redis.call('SET', key, v, 'PX', ttl)
    end
    out[#out + 1] = v
    out[#out + 1] = 0
  else
    local v = redis.pcall('INCRBY', key, delta)
    if type(v) == 'table' then
      -- Past 2^63 - 1: the count stays at the largest long instead of failing or wrapping.
      v = '9223372036854775807'
      redis.call('SET', key, v, 'KEEPTTL')
    elseif v >= EXACT then
      v = redis.call('GET', key)
      if v == delta then redis.call('PEXPIRE', key, ttl) end
    elseif v == tonumber(delta) then
      -- Created by this increment (or back from zero): it lives two windows and some slack.
      redis.call('PEXPIRE', key, ttl)
    end
    out[#out + 1] = v
    if kind == 'w' then
      out[#out + 1] = redis.call('GET', KEYS[k]) or 0
      k = k + 1
    else
      out[#out + 1] = 0
    end
  end
end
return out
