// FalkorDB returns cosine distance d; 1 - d/2 is the similarity in [0, 1] ((1 + cos) / 2).
CALL db.idx.vector.queryNodes('Episode', 'embedding', $k, vecf32($embedding)) YIELD node, score
WITH node, score WHERE node.user_id = $user_id
RETURN node.uid AS uid, 1.0 - score / 2.0 AS similarity
ORDER BY similarity DESC
LIMIT $limit
