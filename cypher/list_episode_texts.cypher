// A page of a user's messages as the episode leg's lexical index reads them.
MATCH (p:Episode {user_id: $user_id})
RETURN p.uid AS uid, p.session_id AS session_id, p.speaker AS speaker, p.role AS role,
       p.content AS content, p.ts AS ts, p.source AS source
ORDER BY p.uid
SKIP $skip LIMIT $limit
