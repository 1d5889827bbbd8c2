// Delete those of a user's entities that no fact names and no message mentions any more.
UNWIND $uids AS id
MATCH (e:Entity {user_id: $user_id, uid: id})
WHERE NOT (e)<-[:SUBJECT|OBJECT]-(:Fact) AND NOT (e)<-[:MENTIONS]-(:Episode)
WITH e, e.uid AS uid
DETACH DELETE e
RETURN collect(uid) AS result
