MATCH (p:Episode {user_id: $user_id})
RETURN count(p) AS episodes
