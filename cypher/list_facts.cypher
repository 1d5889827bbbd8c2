// A page of a user's facts, oldest first; with $since / $until (epoch seconds, or null),
// those that became true (valid_at, else first_seen) in that window.
MATCH (f:Fact {user_id: $user_id})-[:SUBJECT]->(s:Entity)
WHERE ($include_invalid OR f.invalid_at IS NULL)
  AND ($since IS NULL OR coalesce(f.valid_at, f.first_seen) >= $since)
  AND ($until IS NULL OR coalesce(f.valid_at, f.first_seen) <= $until)
MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.uid, .user_id, .predicate, .text, .valid_at, .valid_unit, .invalid_at, .mentions,
          .first_seen, .last_seen, .updated_at, .episodes, .confidence} AS fact,
       s {.uid, .name} AS subject, o {.uid, .name} AS object
ORDER BY f.first_seen, f.uid
SKIP $skip LIMIT $limit
