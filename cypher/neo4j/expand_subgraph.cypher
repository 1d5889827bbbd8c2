// Depth-2 neighbourhood of anchor entities over typed fact relationships, in one round trip.
// Each hop keeps at most $fanout edges per node, the most relevant predicates ($weights) and the
// most mentioned neighbours first, so a hub with thousands of edges cannot flood the result.
// Hop 2 continues only through the predicates in $expand_via (those the question may be about),
// so a hub reached by an irrelevant predicate (a genre, a year) is never scanned, and reads at
// most $hub_scan edges of any node it continues from (a genre with 10k films costs no more).
// mid_degree: how many edges of the middle node were read (at most $hub_scan).
UNWIND $anchors AS anchor_uid
MATCH (a:Entity {user_id: $user_id, uid: anchor_uid})-[r1]-(m:Entity)
WHERE r1.user_id = $user_id AND ($include_invalid OR r1.invalid_at IS NULL)
WITH a, r1, m
ORDER BY coalesce($weights[type(r1)], 0.0) DESC, m.mentions DESC
WITH a, collect({r: r1, m: m})[0..$fanout] AS hop1
UNWIND hop1 AS h
WITH a, h.r AS r1, h.m AS m
CALL (a, r1, m) {
  OPTIONAL MATCH (m)-[r2]-(b:Entity)
  WHERE $depth > 1 AND type(r1) IN $expand_via
        AND r2.user_id = $user_id AND ($include_invalid OR r2.invalid_at IS NULL)
        AND b <> a AND r2.uid <> r1.uid
  RETURN r2, b
  LIMIT $hub_scan
}
WITH a, r1, m, r2, b
ORDER BY coalesce($weights[type(r2)], 0.0) DESC, b.mentions DESC
WITH a, r1, m, collect(CASE WHEN r2 IS NULL THEN NULL
                            ELSE [r2.uid, type(r2), startNode(r2) = m, b.uid, b.name, b.mentions,
                                  r2.mentions] END
                      ) AS scanned
RETURN a.uid AS anchor, r1.uid AS uid, type(r1) AS predicate, startNode(r1) = a AS outgoing,
       m.uid AS mid, m.name AS mid_name, m.mentions AS mid_mentions, r1.mentions AS mentions,
       scanned[0..$fanout] AS hop2, size(scanned) AS mid_degree
