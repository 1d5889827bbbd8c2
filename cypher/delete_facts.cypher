// Delete facts of a user in both their forms.
UNWIND $uids AS id
MATCH (f:Fact {uid: id})-[:SUBJECT]->(s:Entity)
WHERE f.user_id = $user_id
OPTIONAL MATCH (s)-[r]->(:Entity)
WHERE r.uid = id
DELETE r
DETACH DELETE f
RETURN count(DISTINCT id) AS result
