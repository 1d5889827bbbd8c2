UNWIND $rows AS row
MATCH (e:Entity {user_id: $user_id, uid: row.uid})
SET e.embedding = vecf32(row.embedding)
RETURN count(e) AS result
