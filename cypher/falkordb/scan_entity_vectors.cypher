// Exact nearest entities of one user (see scan_fact_vectors).
MATCH (e:Entity {user_id: $user_id})
WHERE e.embedding IS NOT NULL
WITH e, vec.cosineDistance(e.embedding, vecf32($embedding)) AS distance
ORDER BY distance
LIMIT $limit
RETURN e {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity,
       1.0 - distance / 2.0 AS similarity
ORDER BY similarity DESC
