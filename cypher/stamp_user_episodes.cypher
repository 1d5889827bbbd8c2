// A user's messages and a sum of their times: each time in whole milliseconds (floored) and
// taken modulo a prime, the remainder made non-negative whichever sign a store's % gives it
// (no sum overflows). What a search process checks its index of the user's messages against;
// `engine.store.rows.times_stamp` computes the same.
MATCH (p:Episode {user_id: $user_id})
WITH p, toInteger(floor(p.ts * 1000)) % 1000000007 AS part
RETURN count(p) AS episodes, sum((part + 1000000007) % 1000000007) AS stamp
