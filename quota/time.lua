-- time.lua: Redis' clock, for Ping and for MarkExhausted's default end.
--
-- KEYS: none
-- ARGV: none
-- Reply: now_us

return usec()
