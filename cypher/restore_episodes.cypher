// Import: exported episodes, properties as exported, with their MENTIONS edges; but an
// extraction that succeeded since the export stays: a held episode that is not 'failed' keeps
// its status and error (an older export does not make it a dead letter again, extracted anew
// when the message is added again).
UNWIND $rows AS row
MERGE (p:Episode {user_id: $user_id, uid: row.uid})
WITH p, row, p.content IS NOT NULL AND coalesce(p.status, 'ok') <> 'failed' AS extracted
SET p.session_id = row.session_id, p.role = row.role, p.speaker = row.speaker, p.content = row.content, p.ts = row.ts,
    p.source = row.source, p.checksum = row.checksum,
    p.status = CASE WHEN extracted THEN p.status ELSE row.status END,
    p.error = CASE WHEN extracted THEN p.error ELSE row.error END, p.metadata = row.metadata,
    p.created_at = row.created_at, p.terms = row.terms, p.terms_v = row.terms_v,
    p.undated = CASE WHEN row.undated THEN true END
WITH p, row
UNWIND row.entity_uids AS entity_uid
MATCH (e:Entity {user_id: $user_id, uid: entity_uid})
MERGE (p)-[:MENTIONS]->(e)
RETURN count(*) AS result
