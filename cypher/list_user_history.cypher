// A page of a user's change history, every event (export).
// Times are [whole seconds, parts of 2^-52 s] (engine/store/rows.py `exact_time`): FalkorDB
// writes a float into a reply with 15 significant digits, a time to the microsecond has 16.
MATCH (h:History {user_id: $user_id})
WHERE h.uid > $after
WITH h, toInteger(h.ts) AS whole
RETURN h {.uid, .target_uid, .event, ts: [whole, toInteger((h.ts - whole) * 4503599627370496)],
          .episode_uid, .detail} AS event
ORDER BY h.uid
LIMIT $limit
