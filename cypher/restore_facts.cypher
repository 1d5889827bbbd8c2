// Import: exported :Fact nodes with their SUBJECT and OBJECT edges, properties as exported.
UNWIND $rows AS row
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MERGE (f:Fact {user_id: $user_id, uid: row.uid})
SET f.id = row.uid, f.predicate = row.predicate, f.text = row.text, f.valid_at = row.valid_at,
    f.invalid_at = row.invalid_at, f.mentions = row.mentions, f.first_seen = row.first_seen,
    f.last_seen = row.last_seen, f.episodes = row.episodes, f.confidence = row.confidence,
    f.created_at = row.created_at
MERGE (f)-[:SUBJECT]->(s)
MERGE (f)-[:OBJECT]->(o)
RETURN count(f) AS result
