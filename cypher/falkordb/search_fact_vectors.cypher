// FalkorDB returns cosine distance d; 1 - d/2 is the similarity in [0, 1] ((1 + cos) / 2).
CALL db.idx.vector.queryNodes('Fact', 'embedding', $k, vecf32($embedding)) YIELD node, score
WITH node AS f, score WHERE f.user_id = $user_id AND ($include_invalid OR f.invalid_at IS NULL)
// the user's nearest, cut to $limit before their ends are matched: the index answers $k
WITH f, score ORDER BY score LIMIT $limit
MATCH (f)-[:SUBJECT]->(s:Entity)
MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.uid, .user_id, .predicate, .text, .valid_at, .valid_unit, .invalid_at, .mentions,
          .first_seen, .last_seen, .updated_at, .episodes, .confidence} AS fact,
       s {.uid, .name} AS subject, o {.uid, .name} AS object, 1.0 - score / 2.0 AS similarity
ORDER BY similarity DESC
