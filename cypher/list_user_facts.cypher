// A page of a user's facts in both forms: the :Fact node and its typed relationship (export).
// The page's uids are chosen first, and only they are read whole: sorting every fact's rows
// took a 128k-fact user 1.8 s a page, so an export of them was quadratic (0.2 s now).
// A fact whose SUBJECT or OBJECT edge is missing (half written) comes as {uid, torn: true}: a
// reader skips it, and the page still counts it, so a short page means the end.
// A map projection of a null relationship is a map of nulls on FalkorDB, hence the CASE.
// Times are [whole seconds, parts of 2^-52 s] (engine/store/rows.py `exact_time`): FalkorDB
// writes a float into a reply with 15 significant digits, a time to the microsecond has 16.
MATCH (f:Fact {user_id: $user_id})
WHERE f.uid > $after
WITH f
ORDER BY f.uid
LIMIT $limit
OPTIONAL MATCH (f)-[:SUBJECT]->(s:Entity)
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
OPTIONAL MATCH (s)-[r]->(o)
WHERE r.uid = f.uid
WITH f, s, o, head(collect(r)) AS r
WITH f, s, o, r,
     [t IN [f.valid_at, f.invalid_at, f.first_seen, f.last_seen, f.created_at, f.updated_at,
            r.valid_at, r.invalid_at, r.last_seen]
         | [toInteger(t), toInteger((t - toInteger(t)) * 4503599627370496)]] AS times
RETURN CASE WHEN s IS NULL OR o IS NULL THEN {uid: f.uid, torn: true}
            ELSE f {.uid, subject_uid: s.uid, object_uid: o.uid, .predicate, .text,
                    valid_at: times[0], .valid_unit, invalid_at: times[1], .mentions,
                    first_seen: times[2], last_seen: times[3],
                    episodes: coalesce(f.episodes, []), .confidence, created_at: times[4],
                    updated_at: times[5], .embedding,
                    relationship: CASE WHEN r IS NULL THEN null
                                       ELSE {type: type(r), valid_at: times[6],
                                             invalid_at: times[7], mentions: r.mentions,
                                             last_seen: times[8]} END} END AS fact
ORDER BY f.uid
