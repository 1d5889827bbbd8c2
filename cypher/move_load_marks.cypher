// A merge: the entity $target_uid takes the load marks of the entity $uid merged into it
// (with its mentions), so a load run again counts the mentions of neither name twice; the
// last $marks_kept of them.
MATCH (g:Entity {user_id: $user_id, uid: $uid})
MATCH (k:Entity {user_id: $user_id, uid: $target_uid})
WITH k, coalesce(k.load_marks, []) AS held, coalesce(g.load_marks, []) AS moved
SET k.load_marks = CASE WHEN size(moved) = 0 THEN k.load_marks
                       ELSE (held + [m IN moved WHERE NOT m IN held])[-$marks_kept..] END
RETURN count(k) AS result
