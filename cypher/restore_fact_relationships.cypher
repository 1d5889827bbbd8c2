// Import: the typed form of exported facts sharing one type; __REL_TYPE__ is a validated type.
UNWIND $rows AS row
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MERGE (s)-[r:__REL_TYPE__ {user_id: $user_id, uid: row.uid}]->(o)
SET r.valid_at = row.relationship.valid_at,
    r.invalid_at = row.relationship.invalid_at, r.mentions = row.relationship.mentions,
    r.last_seen = row.relationship.last_seen
RETURN count(r) AS result
