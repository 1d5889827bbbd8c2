// The change events of one fact or entity, oldest first. A fact written as history at once
// (an older message added late) has its ADD and its INVALIDATE at one time: the ADD first.
MATCH (h:History {user_id: $user_id, target_uid: $target_uid})
RETURN h {.uid, .user_id, .target_uid, .event, .ts, .episode_uid, .detail} AS event
ORDER BY h.ts, CASE h.event WHEN 'ADD' THEN 0 ELSE 1 END, h.uid
