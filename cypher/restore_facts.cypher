// Import: exported :Fact nodes with their SUBJECT and OBJECT edges, but never a step back on a
// fact the user holds: the larger mentions, the later last_seen and updated_at (its last change
// by hand) and the earlier first_seen stay, a fact the store has invalidated stays invalid, and
// the episodes it was said in are the union (those held first, then the exported ones not
// held). Text, valid_at (with its valid_unit), confidence
// and created_at follow the side that changed the fact last: they stay as held when the
// user's history has a change event for it ($change_events, an UPDATE whose detail is one of
// $unchanged_details excepted) later than row.changed_at, the latest in the file; otherwise,
// and for a fact the user does not hold (deleted, or never had), they are the exported ones.
// The MERGE tells which facts it created (`creating` lives only in this statement), what the
// import reports as new.
UNWIND $rows AS row
OPTIONAL MATCH (h:History {user_id: $user_id, target_uid: row.uid})
WHERE h.event IN $change_events AND NOT coalesce(h.detail, '') IN $unchanged_details
WITH row, max(h.ts) AS held_changed
MATCH (s:Entity {user_id: $user_id, uid: row.subject_uid})
MATCH (o:Entity {user_id: $user_id, uid: row.object_uid})
MERGE (f:Fact {user_id: $user_id, uid: row.uid})
ON CREATE SET f.creating = true
WITH s, o, row, f, f.creating IS NOT NULL AS created, coalesce(f.episodes, []) AS held,
     f.text IS NOT NULL AND held_changed IS NOT NULL
     AND (row.changed_at IS NULL OR held_changed > row.changed_at) AS kept
// A vector of the text replaced goes (restore_fact_embeddings writes the exported one next):
// FalkorDB leaves a vector set over another one unchanged.
WITH s, o, row, f, created, kept, held + [e IN row.episodes WHERE NOT e IN held] AS episodes
FOREACH (_ IN CASE WHEN NOT kept AND f.text <> row.text THEN [1] ELSE [] END |
  SET f.embedding = null)
SET f.creating = null, f.id = row.uid, f.predicate = row.predicate,
    f.text = CASE WHEN kept THEN f.text ELSE row.text END,
    f.valid_at = CASE WHEN kept THEN f.valid_at ELSE row.valid_at END,
    f.valid_unit = CASE WHEN kept THEN f.valid_unit ELSE row.valid_unit END,
    f.confidence = CASE WHEN kept THEN f.confidence ELSE row.confidence END,
    f.created_at = CASE WHEN kept THEN f.created_at ELSE row.created_at END,
    f.invalid_at = coalesce(f.invalid_at, row.invalid_at),
    f.mentions = CASE WHEN f.mentions > row.mentions THEN f.mentions ELSE row.mentions END,
    f.first_seen = CASE WHEN f.first_seen < row.first_seen OR row.first_seen IS NULL
                        THEN f.first_seen ELSE row.first_seen END,
    f.last_seen = CASE WHEN f.last_seen > row.last_seen OR row.last_seen IS NULL
                       THEN f.last_seen ELSE row.last_seen END,
    f.updated_at = CASE WHEN f.updated_at > row.updated_at OR row.updated_at IS NULL
                        THEN f.updated_at ELSE row.updated_at END,
    f.episodes = episodes
MERGE (f)-[:SUBJECT]->(s)
MERGE (f)-[:OBJECT]->(o)
RETURN collect(CASE WHEN created THEN f.uid END) AS result
