// A user's entities by normalized key.
UNWIND $keys AS k
MATCH (e:Entity {user_id: $user_id, key: k})
RETURN k AS lookup, e {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity
