// For each [relation, subject, object] of $pairs (a relation's sampled facts), the predicates of
// the current facts stored the other way round, from its object to its subject: the relation
// a twin stores reversed ("X PARENTS Y" and "Y CHILDREN X").
// Both ends found first (the WITH): FalkorDB otherwise walks every edge of the object, a
// chat's speaker has thousands, to find the subject among them (measured: 2x on 200 pairs).
UNWIND $pairs AS pair
MATCH (s:Entity {user_id: $user_id, uid: pair[1]})
MATCH (o:Entity {user_id: $user_id, uid: pair[2]})
WITH pair, s, o
MATCH (o)-[r]->(s)
WHERE r.user_id = $user_id AND r.invalid_at IS NULL
RETURN pair[0] AS relation, type(r) AS predicate, count(*) AS facts
