// Import from Mem0's graph memory: a page of one user's relationships between the nodes Mem0
// wrote. Mem0 labels a node with its type (`:person`), plus `:__Entity__` only when its
// `base_label` option is on (off by default), so the nodes are found by `user_id` and `name`;
// graphmem's own nodes of the user ($graphmem_labels: :Entity, which also carries
// :__Entity__, :Fact, :Episode, ...) are left out.
MATCH (s {user_id: $user_id})-[r]->(o {user_id: $user_id})
WHERE s.name IS NOT NULL AND o.name IS NOT NULL
  AND none(l IN labels(s) + labels(o) WHERE l IN $graphmem_labels)
RETURN s.name AS source, [l IN labels(s) WHERE l <> '__Entity__'] AS source_labels,
       type(r) AS relationship,
       o.name AS target, [l IN labels(o) WHERE l <> '__Entity__'] AS target_labels
ORDER BY source, relationship, target
SKIP $skip LIMIT $limit
