// A user's memory graph: entities and the valid fact relationships between them.
:param user_id => 'alice';
MATCH (a:Entity {user_id: $user_id})-[r]->(b:Entity)
WHERE r.user_id = $user_id AND r.invalid_at IS NULL
RETURN a, r, b
LIMIT 300;
