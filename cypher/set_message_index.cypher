// Store part $part of the user's message index, the index of the messages of $uids,
// replacing the part stored under that number before, unless one of those messages is no
// longer stored (deleted while the index was built: its terms are not written back). The
// $last part also removes the parts numbered after it, and an index stored whole by an
// earlier version. Derived data: a reader checks the parts against the user's message uids
// and reads what they do not cover.
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid IN $uids
WITH count(p) AS stored
WHERE stored = size($uids)
MERGE (m:MessageIndex {user_id: $user_id, part: $part})
SET m.format = $format, m.data = $data
WITH stored
OPTIONAL MATCH (old:MessageIndex {user_id: $user_id})
WHERE $last AND (old.part IS NULL OR old.part > $part)
DELETE old
RETURN DISTINCT stored
