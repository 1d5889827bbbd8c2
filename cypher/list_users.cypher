// Every user of the store with the size of their memory: ids and counts only, no content.
MATCH (e:Entity)
RETURN e.user_id AS user_id, "entities" AS kind, count(e) AS n
UNION ALL
MATCH (f:Fact)
RETURN f.user_id AS user_id, "facts" AS kind, count(f) AS n
UNION ALL
MATCH (f:Fact)
WHERE f.invalid_at IS NULL
RETURN f.user_id AS user_id, "valid_facts" AS kind, count(f) AS n
UNION ALL
MATCH (p:Episode)
RETURN p.user_id AS user_id, "episodes" AS kind, count(p) AS n
