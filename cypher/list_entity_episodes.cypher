// An entity's timeline: the episodes that mention it, newest first; with $since / $until
// (epoch seconds, or null), those said in that window (an undated one is in none).
MATCH (p:Episode)-[:MENTIONS]->(e:Entity {user_id: $user_id, uid: $uid})
WHERE p.user_id = $user_id
  AND (($since IS NULL AND $until IS NULL) OR p.undated IS NULL)
  AND ($since IS NULL OR p.ts >= $since)
  AND ($until IS NULL OR p.ts <= $until)
RETURN p {.uid, .user_id, .session_id, .role, .speaker, .content, .ts, .source, .checksum, .status, .error,
          .metadata, .undated} AS episode
ORDER BY p.ts DESC
LIMIT $limit
