CALL db.idx.fulltext.queryNodes('Entity', $query) YIELD node, score
WITH node, score WHERE node.user_id = $user_id
RETURN node {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity,
       score
ORDER BY score DESC
LIMIT $k
