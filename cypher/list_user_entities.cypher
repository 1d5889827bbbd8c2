// A page of a user's entities with every stored property (export).
MATCH (e:Entity {user_id: $user_id})
WHERE e.uid > $after
RETURN e {.uid, .key, .name, .type, aliases: coalesce(e.aliases, []),
          alias_keys: coalesce(e.alias_keys, []), .mentions, .first_seen, .last_seen,
          .created_at, .updated_at, .embedding,
          load_marks: coalesce(e.load_marks, [])} AS entity
ORDER BY e.uid
LIMIT $limit
