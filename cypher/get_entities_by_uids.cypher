UNWIND $uids AS id
MATCH (e:Entity {user_id: $user_id, uid: id})
RETURN e {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity
