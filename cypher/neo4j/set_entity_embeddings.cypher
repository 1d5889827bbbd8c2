// The procedure stores a compact float32 array and rejects malformed vectors.
UNWIND $rows AS row
MATCH (e:Entity {user_id: $user_id, uid: row.uid})
CALL db.create.setNodeVectorProperty(e, 'embedding', row.embedding)
RETURN count(e) AS result
