// The relationship types each of $nodes has at each end, for the nodes with at most
// $max_mentions mentions (a larger node's every edge is not read: it gets no row; a node
// without a current fact gets rows whose type is null): `subject` is true where the node is
// the fact's subject (a fact joining a node to itself has it at both ends).
UNWIND $nodes AS node_uid
MATCH (n:Entity {user_id: $user_id, uid: node_uid})
WHERE coalesce(n.mentions, 0) <= $max_mentions
OPTIONAL MATCH (n)-[r]->(:Entity)
WHERE r.user_id = $user_id AND r.invalid_at IS NULL
RETURN n.uid AS node, type(r) AS type, true AS subject
UNION
UNWIND $nodes AS node_uid
MATCH (n:Entity {user_id: $user_id, uid: node_uid})
WHERE coalesce(n.mentions, 0) <= $max_mentions
OPTIONAL MATCH (n)<-[r]-(:Entity)
WHERE r.user_id = $user_id AND r.invalid_at IS NULL
RETURN n.uid AS node, type(r) AS type, false AS subject
