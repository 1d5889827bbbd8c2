// The guard a write batch starts with when it writes entities its writer read as stored
// (`EntityRow.stored`: given no vector, nor their aliases or ADD event): it goes on only while
// the user holds each of them under its key with its uid. One deleted since, it yields no row
// and nothing of the batch is written: a MERGE would make it again bare, an entity the name
// search by vector never finds; the writer writes it again whole (engine/store/whole.py).
UNWIND $rows AS row
OPTIONAL MATCH (e:Entity {user_id: $user_id, key: row.key})
WITH count(CASE WHEN e.uid = row.uid THEN 1 END) AS held
WHERE held = size($rows)
RETURN held AS result
