// A page of a user's facts, oldest first.
MATCH (f:Fact {user_id: $user_id})-[:SUBJECT]->(s:Entity)
WHERE $include_invalid OR f.invalid_at IS NULL
MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.uid, .user_id, .predicate, .text, .valid_at, .invalid_at, .mentions, .first_seen,
          .last_seen, .episodes, .confidence} AS fact,
       s {.uid, .name} AS subject, o {.uid, .name} AS object
ORDER BY f.first_seen, f.uid
SKIP $skip LIMIT $limit
