// A user's entity whose key, or one of its alias keys, reads $loose once the characters of
// $dropped are left out ("spider-man" for "spiderman"): the lookup by name when no key
// matches exactly. The most mentioned one when several do.
MATCH (e:Entity {user_id: $user_id})
WHERE reduce(s = e.key, c IN $dropped | replace(s, c, '')) = $loose
   OR any(a IN coalesce(e.alias_keys, []) WHERE reduce(s = a, c IN $dropped | replace(s, c, '')) = $loose)
RETURN e {.uid, .user_id, .key, .name, .type, .aliases, .mentions, .first_seen, .last_seen} AS entity
ORDER BY e.mentions DESC, e.uid
LIMIT 1
