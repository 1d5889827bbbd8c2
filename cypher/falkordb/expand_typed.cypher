// One hop from each of $nodes over the fact relationships of the types in __REL_TYPE__ (the
// engine fills in validated types joined by "|"): the read goes by relationship type, so a hub's
// edges of other types are never touched. At most $scan edges are read per node (the first in
// storage order), then the most mentioned $limit neighbours kept; at most $total edges in all
// (the nodes in the order given). degree: how many were read (at most $scan).
// FalkorDB evaluates a traversal once per batch of input rows, but once per row inside a
// subquery: ~0.1 ms per node for an undirected read of six types. So the nodes that cannot
// hold more than $scan edges (their mentions count them) are read in one batched traversal and
// cut to $scan after; only the others (hubs) are read one by one in a subquery that stops at
// $scan. Both return the same edges in the same order: 156 players read by six types, 20 ms ->
// 4 ms. FalkorDB has no scoped `CALL (vars) { }`: its subquery imports with a leading WITH.
CALL {
  UNWIND range(0, size($nodes) - 1) AS i
  MATCH (n:Entity {user_id: $user_id, uid: $nodes[i]})
  WHERE n.mentions <= $scan
  MATCH (n)-[r:__REL_TYPE__]-(m:Entity)
  WHERE r.user_id = $user_id AND ($include_invalid OR r.invalid_at IS NULL)
  WITH i, n, collect([r, m])[0..$scan] AS scanned
  RETURN i, n, scanned
  UNION ALL
  UNWIND range(0, size($nodes) - 1) AS i
  MATCH (n:Entity {user_id: $user_id, uid: $nodes[i]})
  WHERE NOT n.mentions <= $scan
  CALL {
    WITH n
    MATCH (n)-[r:__REL_TYPE__]-(m:Entity)
    WHERE r.user_id = $user_id AND ($include_invalid OR r.invalid_at IS NULL)
    RETURN r, m
    LIMIT $scan
  }
  WITH i, n, collect([r, m]) AS scanned
  RETURN i, n, scanned
}
WITH i, n, scanned
ORDER BY i
UNWIND scanned AS rm
WITH n, rm[0] AS r, rm[1] AS m
LIMIT $total
WITH n, r, m
ORDER BY m.mentions DESC, r.mentions DESC
WITH n, collect([r.uid, type(r), startNode(r) = n, m.uid, m.name, m.mentions, r.mentions]) AS read
RETURN n.uid AS near, read[0..$limit] AS edges, size(read) AS degree
