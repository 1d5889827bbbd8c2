// Upsert :Fact nodes with their SUBJECT and OBJECT edges; re-asserting a fact revalidates it.
// id (= uid): LlamaIndex's get_rel_map reaches facts through SUBJECT/OBJECT and reads it.
// Keyed by (user_id, uid): a node another user wrote under the same uid is never touched.
UNWIND $rows AS row
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MERGE (f:Fact {user_id: $user_id, uid: row.uid})
ON CREATE SET f.id = row.uid, f.predicate = row.predicate, f.text = row.text,
              f.valid_at = row.valid_at, f.mentions = 0, f.first_seen = row.ts,
              f.episodes = [], f.confidence = row.confidence, f.created_at = $now
SET f.mentions = f.mentions + row.mentions,
    f.invalid_at = null,
    f.last_seen = CASE WHEN f.last_seen IS NULL OR row.ts > f.last_seen THEN row.ts ELSE f.last_seen END,
    f.episodes = CASE WHEN row.episode IS NULL OR row.episode IN f.episodes
                      THEN f.episodes ELSE f.episodes + row.episode END
MERGE (f)-[:SUBJECT]->(s)
MERGE (f)-[:OBJECT]->(o)
RETURN collect([f.uid, f.mentions]) AS result
