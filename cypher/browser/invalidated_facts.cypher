// Facts a later message contradicted: kept as history, hidden from search.
:param user_id => 'alice';
MATCH (f:Fact {user_id: $user_id})-[:SUBJECT]->(s:Entity)
WHERE f.invalid_at IS NOT NULL
MATCH (f)-[:OBJECT]->(o:Entity)
RETURN s.name AS subject, f.predicate AS predicate, o.name AS object, f.text AS text,
       CASE WHEN f.valid_at IS NOT NULL
            THEN datetime({epochMillis: toInteger(f.valid_at * 1000)}) END AS valid_from,
       coalesce(f.valid_unit, CASE WHEN f.valid_at IS NOT NULL THEN 'day' END) AS valid_unit,
       datetime({epochMillis: toInteger(f.invalid_at * 1000)}) AS invalid_from
ORDER BY f.invalid_at DESC
LIMIT 100;
