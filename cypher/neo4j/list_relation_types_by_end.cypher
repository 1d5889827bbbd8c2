// The relationship types each of $nodes has at each end: `subject` is true where the node is
// the fact's subject (a fact joining a node to itself has it at both ends). Asked of ordinary
// nodes only: it reads every edge of a node, and the engine never asks it of a hub.
UNWIND $nodes AS node_uid
MATCH (n:Entity {user_id: $user_id, uid: node_uid})-[r]->(:Entity)
WHERE r.user_id = $user_id AND r.invalid_at IS NULL
RETURN n.uid AS node, type(r) AS type, true AS subject
UNION
UNWIND $nodes AS node_uid
MATCH (n:Entity {user_id: $user_id, uid: node_uid})<-[r]-(:Entity)
WHERE r.user_id = $user_id AND r.invalid_at IS NULL
RETURN n.uid AS node, type(r) AS type, false AS subject
