// $query is Lucene syntax built by the adapter from escaped terms. The procedure streams hits
// best first, so filtering by user before LIMIT cannot starve. Ordered and cut before the
// projection: the index answers for every user.
CALL db.index.fulltext.queryNodes('entity_fulltext', $query) YIELD node, score
WITH node, score WHERE node.user_id = $user_id
WITH node, score ORDER BY score DESC LIMIT $k
RETURN node {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity,
       score
ORDER BY score DESC
