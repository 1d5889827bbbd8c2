// Every fact edge of each of $nodes, current or not, for the walk's in-process adjacency
// (`engine.retrieval.known_edges`): read through the :Fact nodes (see expand_any), at most
// $most per node (a node with that many is not kept: the caller asks one more than it keeps).
// A node with no fact returns no row. Each edge comes back as one line of text, `1 ` (current)
// or `0 ` then the line `engine.store.rows.edge_line` reads; a fact joining a node to itself
// comes back twice, and such a node is not kept.
// FalkorDB has no scoped `CALL (vars) { }`: its subquery imports with a leading WITH.
UNWIND $nodes AS near_uid
MATCH (n:Entity {user_id: $user_id, uid: near_uid})
CALL {
  WITH n
  MATCH (n)<-[side:SUBJECT|OBJECT]-(f:Fact)
  WHERE f.user_id = $user_id
  RETURN f, side
  LIMIT $most
}
MATCH (f)-[other:SUBJECT|OBJECT]->(m:Entity)
WHERE type(other) <> type(side)
RETURN n.uid AS near, collect(
  CASE WHEN f.invalid_at IS NULL THEN '1 ' ELSE '0 ' END +
  toString(size(f.uid)) + ' ' + toString(size(m.uid)) + ' ' + f.predicate +
  CASE WHEN type(side) = 'SUBJECT' THEN ' > ' ELSE ' < ' END +
  toString(coalesce(m.mentions, 0)) + ' ' + toString(coalesce(f.mentions, 0)) + ' ' +
  f.uid + m.uid + m.name
) AS edges
