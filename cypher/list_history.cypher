MATCH (h:History {user_id: $user_id, target_uid: $target_uid})
RETURN h {.uid, .user_id, .target_uid, .event, .ts, .episode_uid, .detail} AS event
ORDER BY h.ts, h.uid
