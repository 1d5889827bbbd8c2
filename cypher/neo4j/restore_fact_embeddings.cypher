// Import: exported fact vectors, each written only where the fact holds the text it embeds
// (restore_facts kept the held text of a fact the store changed since: its vector stays).
UNWIND $rows AS row
MATCH (f:Fact {uid: row.uid})
WHERE f.user_id = $user_id AND f.text = row.text
CALL db.create.setNodeVectorProperty(f, 'embedding', row.embedding)
RETURN count(f) AS result
