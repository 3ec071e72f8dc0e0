-- One decision's counters, atomically, in one call. ARGV holds five values per counter:
--   kind ('w' a window whose previous window is read, 'c' a window whose previous count the
--   caller knows, 'r' a running counter, 't' a running counter whose floor is a time: nanoseconds
--   since 2020-01-01 on the caller's clock), delta, ttl in ms, floor, ceiling.
-- For 't', floor and ceiling are moved by (Redis's TIME - floor) before they are used, so the
-- counter lives on Redis's clock whatever the caller's clock says, and the value is reported moved
-- back, in the caller's frame.
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
local B = 1000000000
local function norm(h, l)
  while l < 0 do h, l = h - 1, l + B end
  while l >= B do h, l = h + 1, l - B end
  return h, l
end
local nowh, nowl
local out, k = {}, 1
for a = 1, #ARGV, 5 do
  local kind, delta, ttl = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  local key = KEYS[k]
  k = k + 1
  if kind == 'r' or kind == 't' then
    -- v = max(stored, floor) + delta; stored only when v <= ceiling, reported either way.
    local vh, vl = num(ARGV[a + 3])
    local ch, cl = num(ARGV[a + 4])
    local sh, sl = 0, 0
    if kind == 't' then
      if not nowh then
        local t = redis.call('TIME')
        nowh, nowl = tonumber(t[1]) - 1577836800, tonumber(t[2]) * 1000
      end
      sh, sl = norm(nowh - vh, nowl - vl)
      vh, vl = nowh, nowl
      if ch < MAXH or (ch == MAXH and cl < MAXL) then
        ch, cl = norm(ch + sh, cl + sl)
        if ch > MAXH or (ch == MAXH and cl > MAXL) then ch, cl = MAXH, MAXL end
      end
    end
    local s = redis.call('GET', key)
    if s then
      local gh, gl = num(s)
      if gh > vh or (gh == vh and gl > vl) then vh, vl = gh, gl end
    end
    local dh, dl = num(delta)
    vh, vl = vh + dh, vl + dl
    if vl >= 1000000000 then vh, vl = vh + 1, vl - 1000000000 end
    if vh > MAXH or (vh == MAXH and vl > MAXL) then vh, vl = MAXH, MAXL end
    if vh < ch or (vh == ch and vl <= cl) then
      redis.call('SET', key, text(vh, vl), 'PX', ttl)
    end
    if kind == 't' then
      -- Back in the caller's frame, saturated as above (a caller ahead of Redis adds to it).
      vh, vl = norm(vh - sh, vl - sl)
      if vh > MAXH or (vh == MAXH and vl > MAXL) then vh, vl = MAXH, MAXL end
    end
    out[#out + 1] = text(vh, vl)
    out[#out + 1] = 0
  else
    local v
    if redis.call('SET', key, delta, 'PX', ttl, 'NX') then
      -- Created with its expiry in one command: it lives two windows and some slack, and no
      -- refused command can leave it without one.
      v = tonumber(delta)
      if v >= EXACT then v = delta end
    else
      v = redis.pcall('INCRBY', key, delta)
      if type(v) == 'table' then
        if not string.find(v.err or '', 'overflow', 1, true) then
          -- Any other refusal (an ACL without INCRBY, a key of another type) is the store
          -- failing, with Redis's own error: never a saturated count.
          return redis.error_reply('INCRBY refused: ' .. tostring(v.err))
        end
        -- Past 2^63 - 1: the count stays at the largest long instead of failing or wrapping.
        v = '9223372036854775807'
        redis.call('SET', key, v, 'KEEPTTL')
      elseif v >= EXACT then
        v = redis.call('GET', key)
      end
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
