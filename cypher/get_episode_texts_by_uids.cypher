// The user's messages of these uids as the episode leg's lexical index reads them (see
// list_episode_texts): those written since its stored index was.
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid IN $uids
RETURN p.uid AS uid, p.session_id AS session_id, p.speaker AS speaker, p.role AS role,
       p.content AS content, p.ts AS ts, p.source AS source, p.undated AS undated,
       CASE WHEN p.terms_v = $terms_v THEN p.terms ELSE null END AS terms
ORDER BY p.uid
