// Every fact edge of each of $nodes, current or not, for the walk's in-process adjacency
// (`engine.retrieval.known_edges`; kept only on a store that says its write generation, which
// Neo4j does not yet): the typed relationships between entities, at most $most per node (a
// node with that many is not kept: the caller asks one more than it keeps). A node with no
// fact returns no row. Each edge comes back as one line of text, `1 ` (current) or `0 ` then
// the line `engine.store.rows.edge_line` reads; a fact joining a node to itself comes back
// twice, and such a node is not kept.
UNWIND $nodes AS near_uid
MATCH (n:Entity {user_id: $user_id, uid: near_uid})
CALL (n) {
  MATCH (n)-[r]-(m:Entity)
  WHERE r.user_id = $user_id
  RETURN r, m
  LIMIT $most
}
RETURN n.uid AS near, collect(
  CASE WHEN r.invalid_at IS NULL THEN '1 ' ELSE '0 ' END +
  toString(size(r.uid)) + ' ' + toString(size(m.uid)) + ' ' + type(r) +
  CASE WHEN startNode(r) = n THEN ' > ' ELSE ' < ' END +
  toString(coalesce(m.mentions, 0)) + ' ' + toString(coalesce(r.mentions, 0)) + ' ' +
  r.uid + m.uid + m.name
) AS edges
