// The size of one user's memory: their entities, facts (valid ones apart) and episodes, each
// read through its label's user_id index (`count_nodes` given a user filtered a scan of every
// user's nodes: a CLI read of a small user, or a bound MCP connection's list_users, paid for
// the whole store). `users` is 1 when the user has an entity, as `count_nodes` counts them.
OPTIONAL MATCH (e:Entity {user_id: $user_id})
WITH count(e) AS entities
OPTIONAL MATCH (f:Fact {user_id: $user_id})
WITH entities, count(f) AS facts,
     sum(CASE WHEN f IS NOT NULL AND f.invalid_at IS NULL THEN 1 ELSE 0 END) AS valid_facts
OPTIONAL MATCH (p:Episode {user_id: $user_id})
RETURN CASE WHEN entities > 0 THEN 1 ELSE 0 END AS users, entities, facts, valid_facts,
       count(p) AS episodes
