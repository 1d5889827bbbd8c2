// The typed form of facts a merge moved (`move_facts`) that share one predicate, as their
// :Fact node holds them now; __REL_TYPE__ is a validated type.
UNWIND $rows AS row
MATCH (n:Fact {user_id: $user_id, uid: row.uid})
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MERGE (s)-[r:__REL_TYPE__ {user_id: $user_id, uid: row.uid}]->(o)
SET r.valid_at = n.valid_at, r.valid_unit = n.valid_unit, r.invalid_at = n.invalid_at, r.mentions = n.mentions,
    r.last_seen = n.last_seen
RETURN count(r) AS result
