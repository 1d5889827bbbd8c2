// The procedure stores a compact float32 array and rejects malformed vectors.
UNWIND $rows AS row
MATCH (f:Fact {uid: row.uid})
WHERE f.user_id = $user_id
CALL db.create.setNodeVectorProperty(f, 'embedding', row.embedding)
RETURN count(f) AS result
