MATCH (n)
DETACH DELETE n
RETURN count(*) AS deleted
