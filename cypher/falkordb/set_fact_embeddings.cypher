UNWIND $rows AS row
MATCH (f:Fact {uid: row.uid})
WHERE f.user_id = $user_id
SET f.embedding = vecf32(row.embedding)
RETURN count(f) AS result
