// One hop from each of $nodes over the fact relationships of the types in __REL_TYPE__ (the
// engine fills in validated types joined by "|"): the read goes by relationship type, so a hub's
// edges of other types are never touched. At most $scan edges are read per node, then the most
// mentioned $limit neighbours kept; at most $total edges in all (the nodes in the order given).
// degree: how many were read (at most $scan).
// Ties in mentions go to the lower r.uid: which of the edges read are kept, and in what order,
// is a function of the graph, not of where the store keeps each edge.
// Each edge comes back as one line of text (`engine.store.rows.edge_line` reads it).
UNWIND $nodes AS near_uid
MATCH (n:Entity {user_id: $user_id, uid: near_uid})
CALL (n) {
  MATCH (n)-[r:__REL_TYPE__]-(m:Entity)
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
