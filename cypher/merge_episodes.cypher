// Keep raw messages with provenance, linked to the entities they mention.
// Keyed by (user_id, uid): a node another user wrote under the same uid is never touched.
UNWIND $rows AS row
MERGE (p:Episode {user_id: $user_id, uid: row.uid})
ON CREATE SET p.session_id = row.session_id, p.role = row.role,
              p.content = row.content, p.ts = row.ts, p.source = row.source,
              p.speaker = row.speaker, p.terms = row.terms, p.terms_v = row.terms_v,
              p.undated = CASE WHEN row.undated THEN true END,
              p.checksum = row.checksum, p.metadata = row.metadata,
              p.created_at = $now
SET p.status = row.status, p.error = row.error
WITH p, row
UNWIND row.entity_uids AS entity_uid
MATCH (e:Entity {user_id: $user_id, uid: entity_uid})
MERGE (p)-[:MENTIONS]->(e)
RETURN count(*) AS result
