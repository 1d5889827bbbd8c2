// Exact nearest messages of one user (see scan_fact_vectors).
MATCH (p:Episode {user_id: $user_id})
WHERE p.embedding IS NOT NULL
WITH p, vec.cosineDistance(p.embedding, vecf32($embedding)) AS distance
ORDER BY distance
LIMIT $limit
RETURN p.uid AS uid, 1.0 - distance / 2.0 AS similarity
ORDER BY similarity DESC
