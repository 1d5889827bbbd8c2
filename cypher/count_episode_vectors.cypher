// How many :Episode nodes a vector scan of one user would read, counted up to $cap (see
// count_fact_vectors).
MATCH (p:Episode {user_id: $user_id})
WITH p LIMIT $cap
RETURN count(p) AS nodes
