// Neo4j's cosine score is already the similarity in [0, 1] ((1 + cos) / 2).
CALL db.index.vector.queryNodes('entity_embedding', $k, $embedding) YIELD node, score
WITH node, score WHERE node.user_id = $user_id
WITH node, score ORDER BY score DESC LIMIT $limit  // cut before the projection: the index answers $k
RETURN node {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity,
       score AS similarity
ORDER BY similarity DESC
