// Exact nearest messages of one user (see scan_fact_vectors).
MATCH (p:Episode {user_id: $user_id})
WHERE p.embedding IS NOT NULL
WITH p, vector.similarity.cosine(p.embedding, $embedding) AS similarity
ORDER BY similarity DESC
LIMIT $limit
RETURN p.uid AS uid, similarity AS similarity
ORDER BY similarity DESC
