// Upsert a user's entities by normalized key and count their mentions. __Entity__, __Node__
// and id (= uid) are what LlamaIndex's Neo4jPropertyGraphStore reads (docs/llama_index.md);
// user_key narrows FalkorDB's name search to the user (engine/store/fulltext.py).
// row.marks (a load's: the row's mentions by the name that gave them, each with a digest of
// the file's lines naming it) are kept in load_marks, the last $marks_kept of them: an entity
// holding a mark has its mentions counted already. A row without marks adds row.mentions.
// The MERGE tells which entities it created (`creating` lives only in this statement): the
// row's on_create event (an add's ADD) is written for those alone and their uids returned,
// so of two writers that both read an entity as new, one adds it.
UNWIND $rows AS row
MERGE (e:Entity {user_id: $user_id, key: row.key})
ON CREATE SET e:__Entity__:__Node__, e.id = row.uid, e.uid = row.uid, e.name = row.name, e.type = row.type, e.aliases = [],
              e.alias_keys = [], e.mentions = 0, e.first_seen = row.ts, e.created_at = $now,
              e.user_key = $user_key, e.creating = true
WITH e, row, e.creating IS NOT NULL AS created, coalesce(e.load_marks, []) AS held
WITH e, row, created, held, [m IN row.marks WHERE NOT m.mark IN held] AS fresh
WITH e, row, created, fresh, reduce(n = 0, m IN fresh | n + m.mentions) AS marked,
     (held + [m IN fresh | m.mark])[-$marks_kept..] AS marks
SET e.creating = null,
    e.mentions = e.mentions + CASE WHEN size(row.marks) = 0 THEN row.mentions ELSE marked END,
    e.load_marks = CASE WHEN size(fresh) = 0 THEN e.load_marks ELSE marks END,
    e.type = coalesce(e.type, row.type),
    e.last_seen = CASE WHEN e.last_seen IS NULL OR row.ts > e.last_seen THEN row.ts ELSE e.last_seen END,
    e.updated_at = $now
FOREACH (c IN CASE WHEN created AND row.on_create IS NOT NULL THEN [row.on_create] ELSE [] END |
  MERGE (h:History {user_id: $user_id, uid: c.uid})
  ON CREATE SET h.target_uid = c.target_uid, h.event = c.event,
                h.ts = c.ts, h.episode_uid = c.episode_uid, h.detail = c.detail)
RETURN collect(CASE WHEN created THEN e.uid END) AS result
