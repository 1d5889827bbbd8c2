// Give entities a new display name: the old name stays as an alias, the new name's key becomes
// an alias key (lookups by the new name find the entity), and the entity's own key is kept.
UNWIND $rows AS row
MATCH (e:Entity {user_id: $user_id, uid: row.uid})
WITH e, row, e.name AS old
WHERE old <> row.name
WITH e, row, CASE WHEN old IN e.aliases THEN e.aliases ELSE e.aliases + old END AS aliases
WITH e, row, aliases, reduce(s = "", a IN aliases | s + " " + a) AS aliases_text
SET e.aliases = aliases,
    e.alias_keys = CASE WHEN row.key IN e.alias_keys OR row.key = e.key
                        THEN e.alias_keys ELSE e.alias_keys + row.key END,
    e.name = row.name,
    e.updated_at = $now,
    e.aliases_text = aliases_text
RETURN count(e) AS result
