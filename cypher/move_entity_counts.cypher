// A merge: the kept entity ($target_uid) takes the mentions of the merged one ($uid) as the
// store holds them when this runs, its later last_seen and its load marks (the last
// $marks_kept: a load run again counts the mentions of neither name twice); the merged one is
// left none, so a later round moves only those added since. The merged entity is written
// first (updated_at): on Neo4j that locks it before its mentions are read.
MATCH (g:Entity {user_id: $user_id, uid: $uid})
SET g.updated_at = $now
WITH g
MATCH (k:Entity {user_id: $user_id, uid: $target_uid})
WITH g, k, coalesce(k.load_marks, []) AS held, coalesce(g.load_marks, []) AS moved
WITH g, k, moved, (held + [m IN moved WHERE NOT m IN held])[-$marks_kept..] AS marks
SET k.mentions = k.mentions + coalesce(g.mentions, 0),
    k.load_marks = CASE WHEN size(moved) = 0 THEN k.load_marks ELSE marks END,
    k.last_seen = CASE WHEN k.last_seen IS NULL OR g.last_seen > k.last_seen
                       THEN g.last_seen ELSE k.last_seen END,
    k.updated_at = $now
WITH g, k
SET g.mentions = 0
RETURN count(k) AS result
