// How many facts of each predicate each of $nodes has, read through the :Fact nodes (see
// expand_any: an untyped relationship pattern costs once per relationship type on FalkorDB).
// Asked of ordinary nodes only: it reads every fact of a node, and the engine never asks it of
// a hub. The WITH keeps FalkorDB from starting at the user's every fact (through the index on
// the filter's f.user_id) and walking back to $nodes: 10-40 ms for six nodes, 0.3 ms this way.
UNWIND $nodes AS node_uid
MATCH (n:Entity {user_id: $user_id, uid: node_uid})<-[:SUBJECT|OBJECT]-(f:Fact)
WITH n, f
WHERE f.user_id = $user_id AND ($include_invalid OR f.invalid_at IS NULL)
RETURN n.uid AS node, f.predicate AS type, count(DISTINCT f) AS edges
