// FalkorDB returns cosine distance d; 1 - d/2 is the similarity in [0, 1] ((1 + cos) / 2).
CALL db.idx.vector.queryNodes('Entity', 'embedding', $k, vecf32($embedding)) YIELD node, score
WITH node, score WHERE node.user_id = $user_id
WITH node, score ORDER BY score LIMIT $limit  // cut before the projection: the index answers $k
RETURN node {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity,
       1.0 - score / 2.0 AS similarity
ORDER BY similarity DESC
