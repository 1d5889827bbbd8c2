// The predicates each of $nodes has at each end, for the nodes with at most $max_mentions
// mentions (a larger node's every fact is not read: it gets no row; a node without a current
// fact gets one row, its type null): `subject` is true where the node is the fact's subject (a
// fact joining a node to itself has it at both ends). Read through the :Fact nodes.
UNWIND $nodes AS node_uid
MATCH (n:Entity {user_id: $user_id, uid: node_uid})
WHERE coalesce(n.mentions, 0) <= $max_mentions
OPTIONAL MATCH (n)<-[end:SUBJECT|OBJECT]-(f:Fact)
WHERE f.user_id = $user_id AND f.invalid_at IS NULL
RETURN DISTINCT n.uid AS node, f.predicate AS type, type(end) = 'SUBJECT' AS subject
