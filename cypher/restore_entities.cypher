// Import: an exported entity comes back with every property exactly as exported.
UNWIND $rows AS row
MERGE (e:Entity {user_id: $user_id, key: row.key})
SET e:__Entity__:__Node__, e.id = row.uid, e.uid = row.uid, e.name = row.name, e.type = row.type, e.aliases = row.aliases,
    e.alias_keys = row.alias_keys,
    e.aliases_text = CASE WHEN size(row.aliases) = 0 THEN null
                          ELSE reduce(s = "", a IN row.aliases | s + " " + a) END,
    e.mentions = row.mentions, e.first_seen = row.first_seen, e.last_seen = row.last_seen,
    e.created_at = row.created_at, e.updated_at = row.updated_at, e.user_key = $user_key
RETURN count(e) AS result
