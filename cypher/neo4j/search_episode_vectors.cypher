// Neo4j's cosine score is already the similarity in [0, 1] ((1 + cos) / 2).
CALL db.index.vector.queryNodes('episode_embedding', $k, $embedding) YIELD node, score
WITH node, score WHERE node.user_id = $user_id
RETURN node.uid AS uid, score AS similarity
ORDER BY similarity DESC
LIMIT $limit
