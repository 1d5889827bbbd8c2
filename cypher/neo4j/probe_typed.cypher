// A few neighbours of each of $nodes along each of several relations at once: the CALL body is
// one relation's read, repeated by the engine for each relation (its validated types joined
// by "|" in place of __REL_TYPE__) and joined by UNION ALL, so each relation keeps its own
// LIMIT. At most $limit edges per node and relation, read by type (a hub's other edges are
// never touched). The engine splits each node's edges by relation again.
// Ties in mentions go to the lower r.uid: the order is a function of the graph, not of where
// the store keeps each edge.
// Each edge comes back as one line of text (`engine.store.rows.edge_line` reads it).
UNWIND $nodes AS near_uid
MATCH (n:Entity {user_id: $user_id, uid: near_uid})
CALL (n) {
  MATCH (n)-[r:__REL_TYPE__]-(m:Entity)
  WHERE r.user_id = $user_id AND ($include_invalid OR r.invalid_at IS NULL)
  RETURN r, m
  LIMIT $limit
}
WITH n, r, m
ORDER BY m.mentions DESC, r.mentions DESC, r.uid
WITH n, collect(
  toString(size(r.uid)) + ' ' + toString(size(m.uid)) + ' ' + type(r) +
  CASE WHEN startNode(r) = n THEN ' > ' ELSE ' < ' END +
  toString(coalesce(m.mentions, 0)) + ' ' + toString(coalesce(r.mentions, 0)) + ' ' +
  r.uid + m.uid + m.name
) AS read
RETURN n.uid AS near, read AS edges
