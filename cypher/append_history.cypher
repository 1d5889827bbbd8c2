// Change events of facts the same batch creates (a bulk load): their uids derive from the
// batch's time, so they are new and need no lookup.
UNWIND $rows AS row
CREATE (h:History {uid: row.uid, user_id: $user_id, target_uid: row.target_uid, event: row.event,
                   ts: row.ts, episode_uid: row.episode_uid, detail: row.detail})
RETURN count(h) AS result
