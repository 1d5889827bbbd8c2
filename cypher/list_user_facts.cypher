// A page of a user's facts in both forms: the :Fact node and its typed relationship (export).
// A map projection of a null relationship is a map of nulls on FalkorDB, hence the CASE.
MATCH (f:Fact {user_id: $user_id})-[:SUBJECT]->(s:Entity)
WHERE f.uid > $after
MATCH (f)-[:OBJECT]->(o:Entity)
OPTIONAL MATCH (s)-[r]->(o)
WHERE r.uid = f.uid
WITH f, s, o, head(collect(r)) AS r
RETURN f {.uid, subject_uid: s.uid, object_uid: o.uid, .predicate, .text, .valid_at,
          .invalid_at, .mentions, .first_seen, .last_seen, episodes: coalesce(f.episodes, []),
          .confidence, .created_at, .updated_at, .embedding,
          relationship: CASE WHEN r IS NULL THEN null
                             ELSE {type: type(r), valid_at: r.valid_at, invalid_at: r.invalid_at,
                                   mentions: r.mentions, last_seen: r.last_seen} END} AS fact
ORDER BY f.uid
LIMIT $limit
