// A merge moves facts of a user onto their new ends, each (row.old) as the store holds it
// when this runs, not as it was read: it becomes (or joins) the fact row.uid between
// row.subject_uid and row.object_uid, and the old one goes in both its forms. A new fact takes
// the old one's text, vector, ends, times and confidence; one stored there already keeps its
// own text and vector and takes the old one's mentions and sources added up, true from the
// earlier start (with that start's valid_unit) and current if either is. row.event (the MERGE event) is written for a fact
// moved; a row whose fact is gone moves nothing.
// The old fact is written first (updated_at): on Neo4j that locks it before it is read, so a
// writer changing it meanwhile either ends before this reads it or finds it gone.
UNWIND $rows AS row
MATCH (f:Fact {user_id: $user_id, uid: row.old})-[:SUBJECT]->(was:Entity)
SET f.updated_at = $now
WITH row, f, was
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MERGE (n:Fact {user_id: $user_id, uid: row.uid})
ON CREATE SET n.id = row.uid, n.predicate = f.predicate, n.text = f.text,
              n.embedding = f.embedding, n.valid_at = f.valid_at, n.valid_unit = f.valid_unit,
              n.invalid_at = f.invalid_at, n.mentions = 0, n.first_seen = f.first_seen,
              n.last_seen = f.last_seen,
              n.episodes = [], n.confidence = f.confidence, n.created_at = $now
// a WITH between the two: FalkorDB gives a SET right after a SET the values from before both
// valid_unit is set before valid_at, so that it compares the start held, on either database
WITH row, f, was, s, o, n,
     n.episodes + [e IN coalesce(f.episodes, []) WHERE NOT e IN n.episodes] AS episodes
SET n.mentions = n.mentions + coalesce(f.mentions, 0),
    n.episodes = episodes,
    n.valid_unit = CASE WHEN n.valid_at IS NULL OR f.valid_at < n.valid_at
                        THEN f.valid_unit ELSE n.valid_unit END,
    n.valid_at = CASE WHEN n.valid_at IS NULL OR f.valid_at < n.valid_at
                      THEN f.valid_at ELSE n.valid_at END,
    n.invalid_at = CASE WHEN n.invalid_at IS NULL OR f.invalid_at IS NULL THEN null
                        WHEN f.invalid_at > n.invalid_at THEN f.invalid_at ELSE n.invalid_at END,
    n.first_seen = CASE WHEN n.first_seen IS NULL OR f.first_seen < n.first_seen
                        THEN f.first_seen ELSE n.first_seen END,
    n.last_seen = CASE WHEN n.last_seen IS NULL OR f.last_seen > n.last_seen
                       THEN f.last_seen ELSE n.last_seen END,
    n.updated_at = $now
MERGE (n)-[:SUBJECT]->(s)
MERGE (n)-[:OBJECT]->(o)
WITH row, f, was, n
FOREACH (e IN [row.event] |
  MERGE (h:History {user_id: $user_id, uid: e.uid})
  ON CREATE SET h.target_uid = e.target_uid, h.event = e.event,
                h.ts = e.ts, h.episode_uid = e.episode_uid, h.detail = e.detail)
WITH row, f, was, n
OPTIONAL MATCH (was)-[r]->(:Entity)
WHERE r.uid = row.old AND r.user_id = $user_id
DELETE r
WITH f, n
DETACH DELETE f
RETURN count(DISTINCT n) AS result
