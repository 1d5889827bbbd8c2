// Append change events (ADD, UPDATE, INVALIDATE, DELETE, MERGE) to a user's history.
// Keyed by (user_id, uid): a node another user wrote under the same uid is never touched.
// Returns the uids of the events it created (an import reports them as new).
UNWIND $rows AS row
MERGE (h:History {user_id: $user_id, uid: row.uid})
ON CREATE SET h.target_uid = row.target_uid, h.event = row.event,
              h.ts = row.ts, h.episode_uid = row.episode_uid, h.detail = row.detail,
              h.creating = true
WITH h, h.creating IS NOT NULL AS created
SET h.creating = null
RETURN collect(CASE WHEN created THEN h.uid END) AS result
