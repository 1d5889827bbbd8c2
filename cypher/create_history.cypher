// Append change events (ADD, UPDATE, INVALIDATE, DELETE, MERGE) to a user's history.
UNWIND $rows AS row
MERGE (h:History {uid: row.uid})
ON CREATE SET h.user_id = $user_id, h.target_uid = row.target_uid, h.event = row.event,
              h.ts = row.ts, h.episode_uid = row.episode_uid, h.detail = row.detail
RETURN count(h) AS result
