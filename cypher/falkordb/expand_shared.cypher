// The edges from each of $nodes (a question's anchors) to the neighbours two or more of them
// share, whatever relations join them: the answer to "which member of X is from Y" is next to
// both, though the walk from a hub anchor reads only the relations the question names. Read
// through the :Fact nodes (see expand_any): at most $scan facts per anchor, in storage order,
// and $total in all; the $limit shared neighbours joined to the most anchors come back, the
// most mentioned first. FalkorDB has no scoped `CALL (vars) { }`: its subquery imports with a
// leading WITH.
// Each edge comes back as one line of text (`engine.store.rows.edge_line` reads it).
UNWIND $nodes AS near_uid
MATCH (n:Entity {user_id: $user_id, uid: near_uid})
CALL {
  WITH n
  MATCH (n)<-[side:SUBJECT|OBJECT]-(f:Fact)
  WHERE f.user_id = $user_id AND ($include_invalid OR f.invalid_at IS NULL)
  RETURN f, side
  LIMIT $scan
}
WITH n, f, side LIMIT $total
MATCH (f)-[other:SUBJECT|OBJECT]->(m:Entity)
WHERE type(other) <> type(side) AND NOT m.uid IN $nodes
WITH m, count(DISTINCT n) AS anchors,
     collect([n.uid,
      toString(size(f.uid)) + ' ' + toString(size(m.uid)) + ' ' + f.predicate +
      CASE WHEN type(side) = 'SUBJECT' THEN ' > ' ELSE ' < ' END +
      toString(coalesce(m.mentions, 0)) + ' ' + toString(coalesce(f.mentions, 0)) + ' ' +
      f.uid + m.uid + m.name]) AS joins
WHERE anchors >= 2
WITH m, anchors, joins
ORDER BY anchors DESC, m.mentions DESC
LIMIT $limit
UNWIND joins AS joined
WITH joined[0] AS near, joined[1] AS edge
RETURN near, collect(edge) AS edges, count(edge) AS degree
