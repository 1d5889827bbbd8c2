// Delete one fact in both its forms.
MATCH (f:Fact {uid: $uid})-[:SUBJECT]->(s:Entity)
WHERE f.user_id = $user_id
OPTIONAL MATCH (s)-[r]->(:Entity)
WHERE r.uid = $uid
DELETE r
DETACH DELETE f
RETURN count(*) AS deleted
