// A user's entities known by another name (alias key).
UNWIND $keys AS k
MATCH (e:Entity {user_id: $user_id})
WHERE k IN e.alias_keys
RETURN k AS lookup, e {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity
