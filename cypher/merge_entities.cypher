// Upsert a user's entities by normalized key and count their mentions. __Entity__, __Node__
// and id (= uid) are what LlamaIndex's Neo4jPropertyGraphStore reads (docs/llama_index.md);
// user_key narrows FalkorDB's name search to the user (engine/store/fulltext.py).
UNWIND $rows AS row
MERGE (e:Entity {user_id: $user_id, key: row.key})
ON CREATE SET e:__Entity__:__Node__, e.id = row.uid, e.uid = row.uid, e.name = row.name, e.type = row.type, e.aliases = [],
              e.alias_keys = [], e.mentions = 0, e.first_seen = row.ts, e.created_at = $now,
              e.user_key = $user_key
SET e.mentions = e.mentions + row.mentions,
    e.type = coalesce(e.type, row.type),
    e.last_seen = CASE WHEN e.last_seen IS NULL OR row.ts > e.last_seen THEN row.ts ELSE e.last_seen END,
    e.updated_at = $now
RETURN count(e) AS result
