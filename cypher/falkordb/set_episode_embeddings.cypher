UNWIND $rows AS row
MATCH (p:Episode {uid: row.uid})
WHERE p.user_id = $user_id
SET p.embedding = vecf32(row.embedding)
RETURN count(p) AS result
