// Facts by uid with their subject and object, for one user.
UNWIND $uids AS id
MATCH (f:Fact {uid: id})-[:SUBJECT]->(s:Entity)
WHERE f.user_id = $user_id
MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.uid, .user_id, .predicate, .text, .valid_at, .valid_unit, .invalid_at, .mentions,
          .first_seen, .last_seen, .updated_at, .episodes, .confidence} AS fact,
       s {.uid, .name} AS subject, o {.uid, .name} AS object
