// Mark facts invalid from $at on; they stay as history.
UNWIND $uids AS id
MATCH (f:Fact {uid: id})-[:SUBJECT]->(s:Entity)
WHERE f.user_id = $user_id AND f.invalid_at IS NULL
MATCH (s)-[r]->(:Entity)
WHERE r.uid = id
SET f.invalid_at = $at, r.invalid_at = $at
RETURN collect(f.uid) AS result
