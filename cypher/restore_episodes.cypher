// Import: exported episodes, properties as exported, with their MENTIONS edges; but a
// message the user holds (the same checksum) stays as it was written: its words, speaker,
// role, time, session, source, index terms and metadata are never replaced by a file's. An
// extraction that succeeded since the export stays too: a held episode that is not 'failed'
// keeps its status and error (an older export does not make it a dead letter again, extracted
// anew when the message is added again). The MERGE tells which episodes it created
// (`creating` lives only in this statement), what the import reports as new; their MENTIONS
// edges follow (restore_episode_mentions).
UNWIND $rows AS row
MERGE (p:Episode {user_id: $user_id, uid: row.uid})
ON CREATE SET p.creating = true
WITH p, row, p.creating IS NOT NULL AS created, p.content IS NOT NULL AS held
WITH p, row, created, held, held AND coalesce(p.status, 'ok') <> 'failed' AS extracted
SET p.creating = null,
    p.session_id = CASE WHEN held THEN p.session_id ELSE row.session_id END,
    p.role = CASE WHEN held THEN p.role ELSE row.role END,
    p.speaker = CASE WHEN held THEN p.speaker ELSE row.speaker END,
    p.content = CASE WHEN held THEN p.content ELSE row.content END,
    p.ts = CASE WHEN held THEN p.ts ELSE row.ts END,
    p.source = CASE WHEN held THEN p.source ELSE row.source END,
    p.checksum = CASE WHEN held THEN p.checksum ELSE row.checksum END,
    p.status = CASE WHEN extracted THEN p.status ELSE row.status END,
    p.error = CASE WHEN extracted THEN p.error ELSE row.error END,
    p.metadata = CASE WHEN held THEN p.metadata ELSE row.metadata END,
    p.created_at = CASE WHEN held AND p.created_at IS NOT NULL THEN p.created_at
                        ELSE row.created_at END,
    p.terms = CASE WHEN held THEN p.terms ELSE row.terms END,
    p.terms_v = CASE WHEN held THEN p.terms_v ELSE row.terms_v END,
    p.undated = CASE WHEN held THEN p.undated WHEN row.undated THEN true END
RETURN collect(CASE WHEN created THEN p.uid END) AS result
