// Delete one message of a user. The facts it was a source of stay, without it among their
// sources; returns those facts and the entities the message mentioned. The user's stored
// message index goes too: it holds the message's terms.
MATCH (p:Episode {user_id: $user_id, uid: $uid})
OPTIONAL MATCH (p)-[:MENTIONS]->(e:Entity)
WITH p, collect(DISTINCT e.uid) AS entities
OPTIONAL MATCH (f:Fact {user_id: $user_id})
WHERE $uid IN f.episodes
WITH p, entities, f, [x IN f.episodes WHERE x <> $uid] AS kept
FOREACH (_ IN CASE WHEN f IS NULL THEN [] ELSE [1] END | SET f.episodes = kept)
WITH p, entities, collect(f.uid) AS facts
DETACH DELETE p
WITH facts, entities
OPTIONAL MATCH (m:MessageIndex {user_id: $user_id})
DELETE m
RETURN facts, entities
