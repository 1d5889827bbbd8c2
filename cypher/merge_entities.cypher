// Upsert a user's entities by normalized key and count their mentions. __Entity__, __Node__
// and id (= uid) are what LlamaIndex's Neo4jPropertyGraphStore reads (docs/llama_index.md);
// user_key narrows FalkorDB's name search to the user (engine/store/fulltext.py).
// row.mark (a load's digest of the facts whose mentions the row adds) is kept in load_marks,
// the last $marks_kept of them: an entity holding it has those mentions counted already.
UNWIND $rows AS row
MERGE (e:Entity {user_id: $user_id, key: row.key})
ON CREATE SET e:__Entity__:__Node__, e.id = row.uid, e.uid = row.uid, e.name = row.name, e.type = row.type, e.aliases = [],
              e.alias_keys = [], e.mentions = 0, e.first_seen = row.ts, e.created_at = $now,
              e.user_key = $user_key
WITH e, row, row.mark IS NOT NULL AND row.mark IN coalesce(e.load_marks, []) AS counted
SET e.mentions = e.mentions + CASE WHEN counted THEN 0 ELSE row.mentions END,
    e.load_marks = CASE WHEN row.mark IS NULL OR counted THEN e.load_marks
                        ELSE (coalesce(e.load_marks, []) + row.mark)[-$marks_kept..] END,
    e.type = coalesce(e.type, row.type),
    e.last_seen = CASE WHEN e.last_seen IS NULL OR row.ts > e.last_seen THEN row.ts ELSE e.last_seen END,
    e.updated_at = $now
RETURN count(e) AS result
