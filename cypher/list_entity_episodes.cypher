// An entity's timeline: the episodes that mention it, newest first.
MATCH (p:Episode)-[:MENTIONS]->(e:Entity {user_id: $user_id, uid: $uid})
WHERE p.user_id = $user_id
RETURN p {.uid, .user_id, .session_id, .role, .speaker, .content, .ts, .source, .checksum, .status, .error,
          .metadata, .undated} AS episode
ORDER BY p.ts DESC
LIMIT $limit
