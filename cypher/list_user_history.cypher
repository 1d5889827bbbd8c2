// A page of a user's change history, every event (export).
MATCH (h:History {user_id: $user_id})
WHERE h.uid > $after
RETURN h {.uid, .target_uid, .event, .ts, .episode_uid, .detail} AS event
ORDER BY h.uid
LIMIT $limit
