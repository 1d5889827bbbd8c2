// One hop from each of $nodes over facts of any type, read through the :Fact nodes (a fact's
// SUBJECT and OBJECT edges) rather than the typed relationships: FalkorDB walks an untyped
// pattern once per relationship type in the graph, so on a graph with a thousand predicates
// `(n)-[r]-(m)` cost 35 ms where this costs 2. The fact's uid, predicate and mentions are those
// of its typed relationship. At most $scan facts are read per node, in storage order, then the
// most mentioned $limit neighbours kept: used where the question names no relation, so a hub
// costs no more than $scan facts, and all of them no more than $total (the nodes in the
// order given). degree: how many were read (at most $scan).
// Ties in mentions go to the lower f.uid: which of the edges read are kept, and in what order,
// is a function of the graph, not of where the store keeps each edge.
// FalkorDB has no scoped `CALL (vars) { }`: its subquery imports with a leading WITH.
// Each edge comes back as one line of text (`engine.store.rows.edge_line` reads it), built
// only for the $limit kept: a hub's context sample keeps 50 of 500 (7.4 -> 3.3 ms).
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
WHERE type(other) <> type(side) AND (m <> n OR type(side) = 'SUBJECT')
WITH n, f, side, m
ORDER BY m.mentions DESC, f.mentions DESC, f.uid
WITH n, collect([f, type(side), m]) AS read
RETURN n.uid AS near, [x IN read[0..$limit] |
  toString(size(x[0].uid)) + ' ' + toString(size(x[2].uid)) + ' ' + x[0].predicate +
  CASE WHEN x[1] = 'SUBJECT' THEN ' > ' ELSE ' < ' END +
  toString(coalesce(x[2].mentions, 0)) + ' ' + toString(coalesce(x[0].mentions, 0)) + ' ' +
  x[0].uid + x[2].uid + x[2].name
] AS edges, size(read) AS degree
