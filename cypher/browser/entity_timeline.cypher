// An entity's timeline: the messages that mention it, newest first.
:param user_id => 'alice';
:param name => 'Alice';
MATCH (p:Episode)-[:MENTIONS]->(e:Entity {user_id: $user_id})
WHERE p.user_id = $user_id
  AND (e.name = $name OR e.key = toLower(trim($name)) OR toLower(trim($name)) IN e.alias_keys)
RETURN datetime({epochMillis: toInteger(p.ts * 1000)}) AS at, p.session_id AS session,
       p.role AS role, p.content AS content
ORDER BY p.ts DESC
LIMIT 100;
