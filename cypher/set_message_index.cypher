// Store the user's message index of the messages of $uids, replacing the one stored before,
// unless one of those messages is no longer stored (deleted while the index was built: its
// terms are not written back). Derived data: a reader checks it against the user's message
// uids and reads what it does not cover.
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid IN $uids
WITH count(p) AS stored
WHERE stored = size($uids)
MERGE (m:MessageIndex {user_id: $user_id})
SET m.format = $format, m.data = $data
RETURN stored
