// Upsert :Fact nodes with their SUBJECT and OBJECT edges; re-asserting a fact revalidates it.
// id (= uid): LlamaIndex's get_rel_map reaches facts through SUBJECT/OBJECT and reads it.
// Keyed by (user_id, uid): a node another user wrote under the same uid is never touched.
// valid_unit: how precisely valid_at is known ("week", "month", "year"); null, to the day.
// The MERGE tells which facts it created (`creating` lives only in this statement): the
// row's on_create event is written for those, its on_match event for the others, so of two
// writers that both read a fact as new, one adds it and the other finds it stored.
// row.stored: the writer read the fact as stored and embedded nothing for it; deleted since,
// it is not created here (it would have no vector): the write leaves it out of its result
// (`Written.vanished`) and the writer writes it again as a new fact, with its vector.
UNWIND $rows AS row
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
OPTIONAL MATCH (held:Fact {user_id: $user_id, uid: row.uid})
WITH row, s, o, held
WHERE held IS NOT NULL OR NOT row.stored
MERGE (f:Fact {user_id: $user_id, uid: row.uid})
ON CREATE SET f.id = row.uid, f.predicate = row.predicate, f.text = row.text,
              f.valid_at = row.valid_at, f.valid_unit = row.valid_unit,
              f.mentions = 0, f.first_seen = row.ts,
              f.episodes = [], f.confidence = row.confidence, f.created_at = $now,
              f.creating = true
WITH row, s, o, f, f.creating IS NOT NULL AS created
SET f.creating = null,
    f.mentions = f.mentions + row.mentions,
    f.invalid_at = null,
    f.last_seen = CASE WHEN f.last_seen IS NULL OR row.ts > f.last_seen THEN row.ts ELSE f.last_seen END,
    f.episodes = CASE WHEN row.episode IS NULL OR row.episode IN f.episodes
                      THEN f.episodes ELSE f.episodes + row.episode END
MERGE (f)-[:SUBJECT]->(s)
MERGE (f)-[:OBJECT]->(o)
WITH f, created, CASE WHEN created THEN row.on_create ELSE row.on_match END AS change
FOREACH (e IN CASE WHEN change IS NULL THEN [] ELSE [change] END |
  MERGE (h:History {user_id: $user_id, uid: e.uid})
  ON CREATE SET h.target_uid = e.target_uid, h.event = e.event,
                h.ts = e.ts, h.episode_uid = e.episode_uid, h.detail = e.detail)
RETURN collect([f.uid, f.mentions, created]) AS result
