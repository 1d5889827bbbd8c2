// The current facts from the subject to the object of each [subject uid, object uid] of $ends:
// those a new fact between the two may contradict (the offline extractor's known facts).
// Both ends found first, then the typed relationships between them (find_reversed_facts.cypher
// says why), then each one's :Fact node by its uid, carried through a WITH: matched with
// `uid: r.uid` in the same part, FalkorDB joined the relationships against every :Fact of the
// user (a 50,000-fact user's one-message add took 0.1 s a pair, a 100-message add timed out).
UNWIND $ends AS pair
MATCH (s:Entity {user_id: $user_id, uid: pair[0]})
MATCH (o:Entity {user_id: $user_id, uid: pair[1]})
WITH s, o
MATCH (s)-[r]->(o)
WHERE r.user_id = $user_id AND r.invalid_at IS NULL
WITH s, o, r.uid AS fact_uid
MATCH (f:Fact {user_id: $user_id, uid: fact_uid})
RETURN f {.uid, .user_id, .predicate, .text, .valid_at, .valid_unit, .invalid_at, .mentions,
          .first_seen, .last_seen, .updated_at, .episodes, .confidence} AS fact,
       s {.uid, .name} AS subject, o {.uid, .name} AS object
