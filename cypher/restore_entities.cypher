// Import: an exported entity comes back with its properties as exported, but its counters are
// never lowered: an older export over a live entity keeps the larger mentions, the later
// last_seen and the earlier first_seen.
UNWIND $rows AS row
MERGE (e:Entity {user_id: $user_id, key: row.key})
SET e:__Entity__:__Node__, e.id = row.uid, e.uid = row.uid, e.name = row.name, e.type = row.type, e.aliases = row.aliases,
    e.alias_keys = row.alias_keys,
    e.aliases_text = CASE WHEN size(row.aliases) = 0 THEN null
                          ELSE reduce(s = "", a IN row.aliases | s + " " + a) END,
    e.mentions = CASE WHEN e.mentions > row.mentions THEN e.mentions ELSE row.mentions END,
    e.first_seen = CASE WHEN e.first_seen < row.first_seen OR row.first_seen IS NULL
                        THEN e.first_seen ELSE row.first_seen END,
    e.last_seen = CASE WHEN e.last_seen > row.last_seen OR row.last_seen IS NULL
                       THEN e.last_seen ELSE row.last_seen END,
    e.created_at = row.created_at, e.updated_at = row.updated_at, e.user_key = $user_key
RETURN count(e) AS result
