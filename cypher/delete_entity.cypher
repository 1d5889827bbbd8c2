// Delete one entity of a user with every fact that names it (both forms: the typed
// relationships go with the entity); returns the deleted facts' uids.
MATCH (e:Entity {user_id: $user_id, uid: $uid})
OPTIONAL MATCH (f:Fact)-[:SUBJECT|OBJECT]->(e)
WHERE f.user_id = $user_id
WITH e, collect(DISTINCT f) AS facts
WITH e, facts, [x IN facts | x.uid] AS uids
FOREACH (x IN facts | DETACH DELETE x)
DETACH DELETE e
RETURN uids AS deleted
