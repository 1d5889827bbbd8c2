// A page of a user's change history, every event (export).
MATCH (h:History {user_id: $user_id})
RETURN h {.uid, .target_uid, .event, .ts, .episode_uid, .detail} AS event
ORDER BY h.uid
SKIP $skip LIMIT $limit
