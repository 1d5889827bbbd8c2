// expand_typed for many nodes at once (`Reads.neighbours` sends it from
// `BATCHED_TYPED_READ_NODES` nodes on): the same edges in the same order (ties in mentions
// to the lower r.uid).
// FalkorDB evaluates a traversal once per batch of input rows, but once per row inside a
// subquery: ~0.1 ms per node for an undirected read of six types. So when no node can hold
// more than $scan edges and all of them fit in $total (by their mentions, which count their
// edges), the nodes are read in one batched traversal and each cut to $scan after. Otherwise
// (a hub among them) they are read one by one, each subquery stopping at $scan and the whole
// read at $total. Both return the same edges in the same order (1,701 bench-hub and 432
// MetaQA reads replayed: no difference); 156 players read by six types: 20 ms -> 4 ms. For one to
// three nodes the extra stages cost more than they save (replayed: 1 node 0.34 -> 0.50 ms).
// FalkorDB has no scoped `CALL (vars) { }`: its subquery imports with a leading WITH.
// Each edge comes back as one line of text (`engine.store.rows.edge_line` reads it), built
// only for the $limit kept (a hub read 500 deep keeps 50; 556 MetaQA reads replayed on FalkorDB:
// the same rows, 1,015 -> 800 ms in all, the slowest 7 -> 3.5 ms).
// `$nodes[i]` is named before the MATCH: looked up inside it, 232 nodes took 1.5 ms more.
UNWIND range(0, size($nodes) - 1) AS i
WITH i, $nodes[i] AS uid
MATCH (n:Entity {user_id: $user_id, uid: uid})
WITH collect([i, n]) AS found
WITH found,
     all(x IN found WHERE x[1].mentions <= $scan)
     AND reduce(edges = 0, x IN found | edges + x[1].mentions) <= $total AS batched
CALL {
  WITH found, batched
  WITH found WHERE batched
  UNWIND found AS x
  WITH x[0] AS i, x[1] AS n
  MATCH (n)-[r:__REL_TYPE__]-(m:Entity)
  WHERE r.user_id = $user_id AND ($include_invalid OR r.invalid_at IS NULL)
  WITH i, n, collect([r, m])[0..$scan] AS scanned
  ORDER BY i
  UNWIND scanned AS rm
  RETURN n, rm[0] AS r, rm[1] AS m
  UNION ALL
  WITH found, batched
  WITH found WHERE NOT batched
  UNWIND found AS x
  WITH x[1] AS n
  CALL {
    WITH n
    MATCH (n)-[r:__REL_TYPE__]-(m:Entity)
    WHERE r.user_id = $user_id AND ($include_invalid OR r.invalid_at IS NULL)
    RETURN r, m
    LIMIT $scan
  }
  RETURN n, r, m
}
WITH n, r, m
LIMIT $total
WITH n, r, m
ORDER BY m.mentions DESC, r.mentions DESC, r.uid
WITH n, collect([r, m]) AS read
RETURN n.uid AS near, [x IN read[0..$limit] |
  toString(size(x[0].uid)) + ' ' + toString(size(x[1].uid)) + ' ' + type(x[0]) +
  CASE WHEN startNode(x[0]) = n THEN ' > ' ELSE ' < ' END +
  toString(coalesce(x[1].mentions, 0)) + ' ' + toString(coalesce(x[0].mentions, 0)) + ' ' +
  x[0].uid + x[1].uid + x[1].name
] AS edges, size(read) AS degree
