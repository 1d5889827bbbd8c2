// One hop from each of $nodes over fact relationships of any type (typed relationships between
// entities only: SUBJECT, OBJECT and MENTIONS lead to other labels). At most $scan edges are
// read per node, in storage order, then the most mentioned $limit neighbours kept: used where
// the question names no relation, so a hub costs no more than $scan edges, and all of them no
// more than $total (the nodes in the order given). degree: how many were read (at most $scan).
// Ties in mentions go to the lower r.uid: which of the edges read are kept, and in what order,
// is a function of the graph, not of where the store keeps each edge.
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
ORDER BY m.mentions DESC, r.mentions DESC, r.uid
WITH n, collect(
  toString(size(r.uid)) + ' ' + toString(size(m.uid)) + ' ' + type(r) +
  CASE WHEN startNode(r) = n THEN ' > ' ELSE ' < ' END +
  toString(coalesce(m.mentions, 0)) + ' ' + toString(coalesce(r.mentions, 0)) + ' ' +
  r.uid + m.uid + m.name
) AS read
RETURN n.uid AS near, read[0..$limit] AS edges, size(read) AS degree
