// Exact nearest entities of one user (see scan_fact_vectors).
MATCH (e:Entity {user_id: $user_id})
WHERE e.embedding IS NOT NULL
WITH e, vector.similarity.cosine(e.embedding, $embedding) AS similarity
ORDER BY similarity DESC
LIMIT $limit
RETURN e {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity,
       similarity AS similarity
ORDER BY similarity DESC
