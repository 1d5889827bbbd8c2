// LlamaIndex's get(ids=...) on graphmem's graph, for one user in one read: each lookup's id is
// an entity's node id (its uid), or else a name, matched by its normalized key; every property
// in $where must hold too. Rows as Neo4jPropertyGraphStore.get returns them, each node once,
// in the order of the first lookup that found it.
UNWIND range(0, size($lookups) - 1) AS i
WITH i, $lookups[i] AS lookup
OPTIONAL MATCH (by_id:Entity:__Node__ {user_id: $user_id, uid: lookup.id})
WHERE by_id.id = lookup.id AND all(k IN keys($where) WHERE by_id[k] = $where[k])
OPTIONAL MATCH (by_key:Entity:__Node__ {user_id: $user_id, key: lookup.key})
WHERE by_id IS NULL AND by_key.id IS NOT NULL
  AND all(k IN keys($where) WHERE by_key[k] = $where[k])
WITH coalesce(by_id, by_key) AS e, i
WHERE e IS NOT NULL
WITH e, min(i) AS first
ORDER BY first
RETURN e.id AS name,
       [l IN labels(e) WHERE l <> '__Entity__' | l][0] AS type,
       e {.*, embedding: null, id: null} AS properties
