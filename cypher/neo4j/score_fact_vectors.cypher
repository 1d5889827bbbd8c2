// The similarity of the query to each of the user's facts of $uids, (1 + cos) / 2 as the
// vector reads give it.
MATCH (f:Fact {user_id: $user_id})
WHERE f.uid IN $uids AND f.embedding IS NOT NULL
RETURN f.uid AS uid, vector.similarity.cosine(f.embedding, $embedding) AS similarity
