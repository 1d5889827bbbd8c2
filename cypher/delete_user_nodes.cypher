// Every node of one user: entities (with their typed relationships), facts, episodes, history.
MATCH (n)
WHERE (n:Entity OR n:Fact OR n:Episode OR n:History) AND n.user_id = $user_id
DETACH DELETE n
RETURN count(*) AS deleted
