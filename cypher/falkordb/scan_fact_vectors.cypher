// Exact nearest facts of one user: the query is compared with every one of the user's facts,
// so they are found however many vectors other users hold (cost linear in the user's facts).
// vec.cosineDistance is the distance the vector index reports; 1 - d/2 = (1 + cos) / 2.
MATCH (f:Fact {user_id: $user_id})
WHERE f.embedding IS NOT NULL AND ($include_invalid OR f.invalid_at IS NULL)
WITH f, vec.cosineDistance(f.embedding, vecf32($embedding)) AS distance
ORDER BY distance
LIMIT $limit
MATCH (f)-[:SUBJECT]->(s:Entity)
MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.uid, .user_id, .predicate, .text, .valid_at, .valid_unit, .invalid_at, .mentions,
          .first_seen, .last_seen, .updated_at, .episodes, .confidence} AS fact,
       s {.uid, .name} AS subject, o {.uid, .name} AS object, 1.0 - distance / 2.0 AS similarity
ORDER BY similarity DESC
