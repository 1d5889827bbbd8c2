// Delete the change events of one fact of a user, when the user has that fact: an id that
// names no fact of theirs (an entity's, another user's) leaves every event as it was.
MATCH (f:Fact {uid: $uid})
WHERE f.user_id = $user_id
MATCH (h:History {user_id: $user_id, target_uid: $uid})
DETACH DELETE h
RETURN count(*) AS deleted
