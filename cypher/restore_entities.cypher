// Import: an exported entity comes back with its properties as exported, but what it holds is
// never lowered: an older export over a live entity keeps the larger mentions, the later
// last_seen, the earlier first_seen, every alias the entity has now (a name merged into it
// since stays found) and its type when the export has none (typed since). Its load marks join
// those the entity holds (the last $marks_kept). The MERGE tells which entities it created
// (`creating` lives only in this statement), what the import reports as new: of two imports
// of one file at once, each counts those it wrote first.
UNWIND $rows AS row
MERGE (e:Entity {user_id: $user_id, key: row.key})
ON CREATE SET e.creating = true
WITH e, row, e.creating IS NOT NULL AS created, coalesce(e.aliases, []) AS held,
     coalesce(e.alias_keys, []) AS held_keys
WITH e, row, created, held + [a IN row.aliases WHERE NOT a IN held] AS aliases,
     held_keys + [k IN row.alias_keys WHERE NOT k IN held_keys] AS alias_keys
WITH e, row, created, aliases, alias_keys, reduce(s = "", a IN aliases | s + " " + a) AS text,
     (coalesce(e.load_marks, []) + [m IN row.load_marks WHERE NOT m IN coalesce(e.load_marks, [])])
     [-$marks_kept..] AS marks
SET e.creating = null, e:__Entity__:__Node__, e.id = row.uid, e.uid = row.uid, e.name = row.name,
    e.type = coalesce(row.type, e.type), e.aliases = aliases,
    e.alias_keys = alias_keys,
    e.aliases_text = CASE WHEN size(aliases) = 0 THEN null ELSE text END,
    e.mentions = CASE WHEN e.mentions > row.mentions THEN e.mentions ELSE row.mentions END,
    e.first_seen = CASE WHEN e.first_seen < row.first_seen OR row.first_seen IS NULL
                        THEN e.first_seen ELSE row.first_seen END,
    e.last_seen = CASE WHEN e.last_seen > row.last_seen OR row.last_seen IS NULL
                       THEN e.last_seen ELSE row.last_seen END,
    e.load_marks = CASE WHEN size(row.load_marks) = 0 THEN e.load_marks ELSE marks END,
    e.created_at = row.created_at, e.updated_at = row.updated_at, e.user_key = $user_key
RETURN collect(CASE WHEN created THEN e.uid END) AS result
