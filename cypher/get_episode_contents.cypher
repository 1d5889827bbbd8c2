// The text of the user's messages of these uids (a stored message index holds none).
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid IN $uids
RETURN p.uid AS uid, p.content AS content
