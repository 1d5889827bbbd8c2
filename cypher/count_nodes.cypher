// Counts for stats(); $user_id null means every user.
MATCH (e:Entity) WHERE $user_id IS NULL OR e.user_id = $user_id
WITH count(e) AS entities, count(DISTINCT e.user_id) AS users
OPTIONAL MATCH (f:Fact) WHERE $user_id IS NULL OR f.user_id = $user_id
WITH entities, users, count(f) AS facts, sum(CASE WHEN f IS NOT NULL AND f.invalid_at IS NULL THEN 1 ELSE 0 END) AS valid_facts
OPTIONAL MATCH (p:Episode) WHERE $user_id IS NULL OR p.user_id = $user_id
RETURN users, entities, facts, valid_facts, count(p) AS episodes
