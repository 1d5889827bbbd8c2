// Import: the typed form of exported facts sharing one type; __REL_TYPE__ is a validated type.
// As restore_facts (which the import runs first, in the same batch): counters never lowered,
// an invalidated fact never made valid again, and valid_at (with its unit) that of the :Fact form, which
// restore_facts took from the side that changed the fact last.
UNWIND $rows AS row
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MATCH (f:Fact {user_id: $user_id, uid: row.uid})
MERGE (s)-[r:__REL_TYPE__ {user_id: $user_id, uid: row.uid}]->(o)
SET r.valid_at = f.valid_at, r.valid_unit = f.valid_unit,
    r.invalid_at = coalesce(r.invalid_at, row.relationship.invalid_at),
    r.mentions = CASE WHEN r.mentions > row.relationship.mentions
                      THEN r.mentions ELSE row.relationship.mentions END,
    r.last_seen = CASE WHEN r.last_seen > row.relationship.last_seen
                            OR row.relationship.last_seen IS NULL
                       THEN r.last_seen ELSE row.relationship.last_seen END
RETURN count(r) AS result
