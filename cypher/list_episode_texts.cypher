// A user's first $limit messages by uid in [$lo, $hi), as the episode leg's lexical index reads them
// (a large user is read a uid range at a time: each read scans only its range of the
// (user_id, uid) index, where a cursor with ORDER BY ... LIMIT sorted every later message
// for each page), with the index terms stored with each one when they were computed under
// $terms_v (else null: computed by the reader). The time is [whole seconds, parts of
// 2^-52 s] (engine/store/rows.py `exact_time`), as stamp_user_episodes reads it.
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid >= $lo AND p.uid < $hi
WITH p, toInteger(p.ts) AS whole
RETURN p.uid AS uid, p.session_id AS session_id, p.speaker AS speaker, p.role AS role,
       p.content AS content, [whole, toInteger((p.ts - whole) * 4503599627370496)] AS ts,
       p.source AS source, p.undated AS undated,
       CASE WHEN p.terms_v = $terms_v THEN p.terms ELSE null END AS terms
ORDER BY p.uid
LIMIT $limit
