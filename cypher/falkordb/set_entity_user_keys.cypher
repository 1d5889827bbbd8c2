// Give a user's entities the user's key (see list_users_without_user_key).
MATCH (e:Entity {user_id: $user_id})
WHERE e.user_key IS NULL
SET e.user_key = $user_key
RETURN count(e) AS result
