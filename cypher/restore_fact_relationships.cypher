// Import: the typed form of exported facts sharing one type; __REL_TYPE__ is a validated type.
// As restore_facts: counters never lowered, an invalidated fact never made valid again.
UNWIND $rows AS row
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MERGE (s)-[r:__REL_TYPE__ {user_id: $user_id, uid: row.uid}]->(o)
SET r.valid_at = row.relationship.valid_at,
    r.invalid_at = coalesce(r.invalid_at, row.relationship.invalid_at),
    r.mentions = CASE WHEN r.mentions > row.relationship.mentions
                      THEN r.mentions ELSE row.relationship.mentions END,
    r.last_seen = CASE WHEN r.last_seen > row.relationship.last_seen
                            OR row.relationship.last_seen IS NULL
                       THEN r.last_seen ELSE row.relationship.last_seen END
RETURN count(r) AS result
