// Vectors arrive packed (engine.store.records.pack_vector): integers in units of 1e-5,
// comma-separated. FalkorDB parses one such string ~3x faster than a list of floats.
UNWIND $rows AS row
MATCH (e:Entity {user_id: $user_id, uid: row.uid})
SET e.embedding = vecf32([x IN split(row.embedding, ',') | toInteger(x) / 100000.0])
RETURN count(e) AS result
