// The similarity of the query to each of the user's episodes of $uids, (1 + cos) / 2 as the
// vector reads give it.
MATCH (p:Episode {user_id: $user_id})
WHERE p.uid IN $uids AND p.embedding IS NOT NULL
RETURN p.uid AS uid, vector.similarity.cosine(p.embedding, $embedding) AS similarity
