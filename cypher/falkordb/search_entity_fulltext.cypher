// The user's best $k name matches. Ordered and cut before the projection: the index answers
// for every user, and projecting each match of a large user cost more than the search itself.
CALL db.idx.fulltext.queryNodes('Entity', $query) YIELD node, score
WITH node, score WHERE node.user_id = $user_id
WITH node, score ORDER BY score DESC LIMIT $k
RETURN node {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity,
       score
ORDER BY score DESC
