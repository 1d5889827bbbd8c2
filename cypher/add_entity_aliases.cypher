// Record other names an entity is known by (display form and normalized key).
UNWIND $rows AS row
MATCH (e:Entity {user_id: $user_id, uid: row.uid})
WHERE NOT row.key IN e.alias_keys AND row.key <> e.key
WITH e, row, reduce(s = "", a IN e.aliases + row.alias | s + " " + a) AS aliases_text
SET e.aliases = e.aliases + row.alias, e.alias_keys = e.alias_keys + row.key,
    e.aliases_text = aliases_text
RETURN count(e) AS result
