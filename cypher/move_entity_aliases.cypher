// A merge: the kept entity ($target_uid) takes the merged one's ($uid) name and aliases as the
// store holds them when this runs (an alias another writer gave it meanwhile moves too): each
// name as an alias unless it has it, each key as an alias key unless it has it or is its key.
MATCH (g:Entity {user_id: $user_id, uid: $uid})
MATCH (k:Entity {user_id: $user_id, uid: $target_uid})
WITH g, k,
     reduce(acc = coalesce(k.aliases, []), a IN [g.name] + coalesce(g.aliases, []) |
            CASE WHEN a IN acc OR a = k.name THEN acc ELSE acc + a END) AS aliases,
     reduce(acc = coalesce(k.alias_keys, []), x IN [g.key] + coalesce(g.alias_keys, []) |
            CASE WHEN x IN acc OR x = k.key THEN acc ELSE acc + x END) AS alias_keys
WITH k, aliases, alias_keys, reduce(s = "", a IN aliases | s + " " + a) AS aliases_text
SET k.aliases = aliases, k.alias_keys = alias_keys, k.aliases_text = aliases_text
RETURN count(k) AS result
