// How many :Entity nodes a vector scan of one user would read, counted up to $cap (see
// count_fact_vectors).
MATCH (e:Entity {user_id: $user_id})
WITH e LIMIT $cap
RETURN count(e) AS nodes
