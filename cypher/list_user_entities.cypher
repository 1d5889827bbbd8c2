// A page of a user's entities with every stored property (export).
// Times are [whole seconds, parts of 2^-52 s] (engine/store/rows.py `exact_time`): FalkorDB
// writes a float into a reply with 15 significant digits, a time to the microsecond has 16.
MATCH (e:Entity {user_id: $user_id})
WHERE e.uid > $after
WITH e, [t IN [e.first_seen, e.last_seen, e.created_at, e.updated_at]
         | [toInteger(t), toInteger((t - toInteger(t)) * 4503599627370496)]] AS times
RETURN e {.uid, .key, .name, .type, aliases: coalesce(e.aliases, []),
          alias_keys: coalesce(e.alias_keys, []), .mentions, first_seen: times[0],
          last_seen: times[1], created_at: times[2], updated_at: times[3], .embedding,
          load_marks: coalesce(e.load_marks, [])} AS entity
ORDER BY e.uid
LIMIT $limit
