// Store the index terms the episode leg computed for messages written without them (an
// older store), so later loads read them; the message itself is left as it is.
UNWIND $rows AS row
MATCH (p:Episode {user_id: $user_id, uid: row.uid})
SET p.terms = row.terms, p.terms_v = $terms_v
RETURN count(p) AS result
