// Up to $k current fact relationships of each of several types, their subjects and objects (a
// sample of the kinds of entity each relation joins): the CALL body is one type's
// read, repeated by the engine for each type (validated, in place of __REL_TYPE__) and joined
// by UNION ALL, so each keeps its own LIMIT. Each row says its type.
CALL () {
  MATCH (s:Entity {user_id: $user_id})-[r:__REL_TYPE__]->(o:Entity)
  WHERE r.user_id = $user_id AND r.invalid_at IS NULL
  RETURN type(r) AS predicate, s.uid AS subject, o.uid AS object
  LIMIT $k
}
RETURN predicate, subject, object
