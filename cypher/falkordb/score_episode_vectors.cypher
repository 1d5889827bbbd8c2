// The similarity of the query to each of the user's episodes of $uids, (1 + cos) / 2 as the
// vector reads give it (1 - d/2 of the cosine distance d).
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid IN $uids AND p.embedding IS NOT NULL
RETURN p.uid AS uid, 1.0 - vec.cosineDistance(p.embedding, vecf32($embedding)) / 2.0 AS similarity
