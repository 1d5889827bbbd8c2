// Import from Mem0's graph memory: a page of one user's relationships between the __Entity__
// nodes Mem0 wrote (graphmem's own entities carry :Entity as well and are left out).
MATCH (s:__Entity__ {user_id: $user_id})-[r]->(o:__Entity__ {user_id: $user_id})
WHERE NOT s:Entity AND NOT o:Entity
RETURN s.name AS source, [l IN labels(s) WHERE l <> '__Entity__'] AS source_labels,
       type(r) AS relationship,
       o.name AS target, [l IN labels(o) WHERE l <> '__Entity__'] AS target_labels
ORDER BY source, relationship, target
SKIP $skip LIMIT $limit
