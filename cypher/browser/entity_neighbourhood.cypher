// Everything within two fact relationships of one entity, found by name or alias.
// Structural edges (SUBJECT, OBJECT, MENTIONS) carry no user_id, so the filter skips them.
:param user_id => 'alice';
:param name => 'Alice';
MATCH (e:Entity {user_id: $user_id})
WHERE e.name = $name OR e.key = toLower(trim($name)) OR toLower(trim($name)) IN e.alias_keys
MATCH path = (e)-[*1..2]-(:Entity)
WHERE all(r IN relationships(path) WHERE r.user_id = $user_id AND r.invalid_at IS NULL)
RETURN path
LIMIT 200;
