// The similarity of the query to each of the user's facts of $uids, (1 + cos) / 2 as the
// vector reads give it (1 - d/2 of the cosine distance d).
MATCH (f:Fact {user_id: $user_id})
WHERE f.uid IN $uids AND f.embedding IS NOT NULL
RETURN f.uid AS uid, 1.0 - vec.cosineDistance(f.embedding, vecf32($embedding)) / 2.0 AS similarity
