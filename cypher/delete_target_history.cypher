// Delete the change events of one fact or entity of a user.
MATCH (h:History {user_id: $user_id, target_uid: $target_uid})
DETACH DELETE h
RETURN count(*) AS deleted
