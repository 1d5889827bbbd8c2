// Up to $k fact relationships of the type in __REL_TYPE__ (filled in by the engine, validated):
// their subjects and objects, a sample of the kinds of entity the relation joins.
MATCH (s:Entity {user_id: $user_id})-[r:__REL_TYPE__]->(o:Entity)
WHERE r.user_id = $user_id AND r.invalid_at IS NULL
RETURN s.uid AS subject, o.uid AS object
LIMIT $k
