// Store the index terms the episode leg computed for messages written without them (an
// older store), so later loads read them; the message itself is left as it is. Matched by
// uid first (as get_episodes_by_uids: an index lookup per row), then kept to the user.
UNWIND $rows AS row
MATCH (p:Episode {uid: row.uid})
WHERE p.user_id = $user_id
SET p.terms = row.terms, p.terms_v = $terms_v
RETURN count(p) AS result
