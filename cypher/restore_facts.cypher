// Import: exported :Fact nodes with their SUBJECT and OBJECT edges, properties as exported,
// but never a step back: the larger mentions, the later last_seen and the earlier first_seen
// stay, and a fact the store has invalidated stays invalid.
UNWIND $rows AS row
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MERGE (f:Fact {user_id: $user_id, uid: row.uid})
SET f.id = row.uid, f.predicate = row.predicate, f.text = row.text, f.valid_at = row.valid_at,
    f.invalid_at = coalesce(f.invalid_at, row.invalid_at),
    f.mentions = CASE WHEN f.mentions > row.mentions THEN f.mentions ELSE row.mentions END,
    f.first_seen = CASE WHEN f.first_seen < row.first_seen OR row.first_seen IS NULL
                        THEN f.first_seen ELSE row.first_seen END,
    f.last_seen = CASE WHEN f.last_seen > row.last_seen OR row.last_seen IS NULL
                       THEN f.last_seen ELSE row.last_seen END,
    f.episodes = row.episodes, f.confidence = row.confidence,
    f.created_at = row.created_at
MERGE (f)-[:SUBJECT]->(s)
MERGE (f)-[:OBJECT]->(o)
RETURN count(f) AS result
