// Import: exported fact vectors, each written only where the fact holds the text it embeds
// (restore_facts kept the held text of a fact the store changed since: its vector stays).
// Vectors arrive packed, as for set_fact_embeddings.
UNWIND $rows AS row
MATCH (f:Fact {uid: row.uid})
WHERE f.user_id = $user_id AND f.text = row.text
SET f.embedding = vecf32([x IN split(row.embedding, ',') | toInteger(x) / 100000.0])
RETURN count(f) AS result
