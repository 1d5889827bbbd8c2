// The edges from each of $nodes (a question's anchors) to the neighbours two or more of them
// share, whatever relations join them: the answer to "which member of X is from Y" is next to
// both, though the walk from a hub anchor reads only the relations the question names. Fact
// relationships only (SUBJECT, OBJECT and MENTIONS lead to other labels): at most $scan per
// anchor, in storage order, and $total in all; the $limit shared neighbours joined to the most
// anchors come back, the most mentioned first.
// Each edge comes back as one line of text (`engine.store.rows.edge_line` reads it).
UNWIND $nodes AS near_uid
MATCH (n:Entity {user_id: $user_id, uid: near_uid})
CALL (n) {
  MATCH (n)-[r]-(m:Entity)
  WHERE r.user_id = $user_id AND ($include_invalid OR r.invalid_at IS NULL)
  RETURN r, m
  LIMIT $scan
}
WITH n, r, m LIMIT $total
WITH n, r, m
WHERE NOT m.uid IN $nodes
WITH m, count(DISTINCT n) AS anchors,
     collect([n.uid,
      toString(size(r.uid)) + ' ' + toString(size(m.uid)) + ' ' + type(r) +
      CASE WHEN startNode(r) = n THEN ' > ' ELSE ' < ' END +
      toString(coalesce(m.mentions, 0)) + ' ' + toString(coalesce(r.mentions, 0)) + ' ' +
      r.uid + m.uid + m.name]) AS joins
WHERE anchors >= 2
WITH m, anchors, joins
ORDER BY anchors DESC, m.mentions DESC
LIMIT $limit
UNWIND joins AS joined
WITH joined[0] AS near, joined[1] AS edge
RETURN near, collect(edge) AS edges, count(edge) AS degree
