// Neo4j's cosine score is already the similarity in [0, 1] ((1 + cos) / 2).
CALL db.index.vector.queryNodes('fact_embedding', $k, $embedding) YIELD node, score
WITH node AS f, score WHERE f.user_id = $user_id AND ($include_invalid OR f.invalid_at IS NULL)
// the user's nearest, cut to $limit before their ends are matched: the index answers $k
WITH f, score ORDER BY score DESC LIMIT $limit
MATCH (f)-[:SUBJECT]->(s:Entity)
MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.uid, .user_id, .predicate, .text, .valid_at, .valid_unit, .invalid_at, .mentions,
          .first_seen, .last_seen, .updated_at, .episodes, .confidence} AS fact,
       s {.uid, .name} AS subject, o {.uid, .name} AS object, score AS similarity
ORDER BY similarity DESC
