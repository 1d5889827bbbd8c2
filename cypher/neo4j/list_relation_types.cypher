// How many fact relationships of each type each of $nodes has (typed relationships between
// entities only). Asked of ordinary nodes only: it reads every edge of a node, and the engine
// never asks it of a hub.
UNWIND $nodes AS node_uid
MATCH (n:Entity {user_id: $user_id, uid: node_uid})-[r]-(:Entity)
WHERE r.user_id = $user_id AND ($include_invalid OR r.invalid_at IS NULL)
RETURN n.uid AS node, type(r) AS type, count(*) AS edges
