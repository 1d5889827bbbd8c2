// Give facts a new sentence (an update written by hand); the batch re-embeds the new text.
// The old vector is cleared first: FalkorDB's index keeps scoring a vector that is overwritten
// in place, and indexes the new one only after the property was removed.
UNWIND $rows AS row
MATCH (f:Fact {user_id: $user_id, uid: row.uid})
SET f.text = row.text, f.updated_at = $now, f.embedding = null
RETURN count(f) AS result
