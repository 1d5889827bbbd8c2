// One hop from each of $nodes over facts of any type, read through the :Fact nodes (a fact's
// SUBJECT and OBJECT edges) rather than the typed relationships: FalkorDB walks an untyped
// pattern once per relationship type in the graph, so on a graph with a thousand predicates
// `(n)-[r]-(m)` cost 35 ms where this costs 2. The fact's uid, predicate and mentions are those
// of its typed relationship. At most $scan facts are read per node, in storage order, then the
// most mentioned $limit neighbours kept: used where the question names no relation, so a hub
// costs no more than $scan facts, and all of them no more than $total (the nodes in the
// order given). degree: how many were read (at most $scan).
// FalkorDB has no scoped `CALL (vars) { }`: its subquery imports with a leading WITH.
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
WHERE type(other) <> type(side) AND (m <> n OR type(side) = 'SUBJECT')
WITH n, f, side, m
ORDER BY m.mentions DESC, f.mentions DESC
WITH n, collect(
  toString(size(f.uid)) + ' ' + toString(size(m.uid)) + ' ' + f.predicate +
  CASE WHEN type(side) = 'SUBJECT' THEN ' > ' ELSE ' < ' END +
  toString(coalesce(m.mentions, 0)) + ' ' + toString(coalesce(f.mentions, 0)) + ' ' +
  f.uid + m.uid + m.name
) AS read
RETURN n.uid AS near, read[0..$limit] AS edges, size(read) AS degree
