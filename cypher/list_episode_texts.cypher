// A page of a user's messages as the episode leg's lexical index reads them: the next
// $limit by uid after $after (a cursor on the (user_id, uid) index, not SKIP, which rereads
// every earlier page), with the index terms stored with each one when they were computed
// under $terms_v (else null: computed by the reader).
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid > $after
RETURN p.uid AS uid, p.session_id AS session_id, p.speaker AS speaker, p.role AS role,
       p.content AS content, p.ts AS ts, p.source AS source, p.undated AS undated,
       CASE WHEN p.terms_v = $terms_v THEN p.terms ELSE null END AS terms
ORDER BY p.uid
LIMIT $limit
