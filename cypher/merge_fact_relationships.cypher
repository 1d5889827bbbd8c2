// The typed form of facts that share one predicate; __REL_TYPE__ is a validated type.
// Only of a fact whose :Fact node is stored (merge_facts, just before, leaves out a fact that
// vanished since its writer read it: `row.stored`).
UNWIND $rows AS row
MATCH (:Fact {user_id: $user_id, uid: row.uid})
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MERGE (s)-[r:__REL_TYPE__ {user_id: $user_id, uid: row.uid}]->(o)
ON CREATE SET r.valid_at = row.valid_at, r.valid_unit = row.valid_unit, r.mentions = 0
SET r.mentions = r.mentions + row.mentions, r.invalid_at = null, r.last_seen = row.ts
RETURN count(r) AS result
