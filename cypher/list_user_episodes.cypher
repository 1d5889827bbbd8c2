// A page of a user's episodes with the uids of the entities each one mentions (export).
// Times are [whole seconds, parts of 2^-52 s] (engine/store/rows.py `exact_time`): FalkorDB
// writes a float into a reply with 15 significant digits, a time to the microsecond has 16.
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid > $after
OPTIONAL MATCH (p)-[:MENTIONS]->(e:Entity)
WITH p, collect(e.uid) AS entity_uids
WITH p, entity_uids, [t IN [p.ts, p.created_at]
         | [toInteger(t), toInteger((t - toInteger(t)) * 4503599627370496)]] AS times
RETURN p {.uid, .session_id, .role, .speaker, .content, ts: times[0], .source, .checksum,
          .status, .error, .metadata, created_at: times[1], .undated,
          entity_uids: entity_uids} AS episode
ORDER BY p.uid
LIMIT $limit
