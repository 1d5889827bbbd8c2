// The guard a write batch of messages starts with: it goes on only when none of its messages
// is stored already as a good episode (another process or thread stored it since this one
// looked, `engine.add.prepare`). Otherwise it yields no row and nothing of the batch is
// written. A failed episode may be written again (its retry).
OPTIONAL MATCH (p:Episode {user_id: $user_id})
WHERE p.uid IN $uids AND coalesce(p.status, 'ok') <> 'failed'
WITH count(p) AS stored
WHERE stored = 0
RETURN stored AS result
