// Mark facts invalid, each from its row's `at` on; they stay as history.
UNWIND $rows AS row
MATCH (f:Fact {uid: row.uid})-[:SUBJECT]->(s:Entity)
WHERE f.user_id = $user_id AND f.invalid_at IS NULL
MATCH (s)-[r]->(:Entity)
WHERE r.uid = row.uid
SET f.invalid_at = row.at, r.invalid_at = row.at
RETURN collect(f.uid) AS result
