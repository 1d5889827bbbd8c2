// A page of a user's episodes with the uids of the entities each one mentions (export).
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid > $after
OPTIONAL MATCH (p)-[:MENTIONS]->(e:Entity)
WITH p, collect(e.uid) AS entity_uids
RETURN p {.uid, .session_id, .role, .speaker, .content, .ts, .source, .checksum, .status, .error,
          .metadata, .created_at, .undated, entity_uids: entity_uids} AS episode
ORDER BY p.uid
LIMIT $limit
