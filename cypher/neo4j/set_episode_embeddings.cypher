// The procedure stores a compact float32 array and rejects malformed vectors.
UNWIND $rows AS row
MATCH (p:Episode {uid: row.uid})
WHERE p.user_id = $user_id
CALL db.create.setNodeVectorProperty(p, 'embedding', row.embedding)
RETURN count(p) AS result
