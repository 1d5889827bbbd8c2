// The embeddings of some of a user's facts (the Mem0 facade's similarity score).
UNWIND $uids AS id
MATCH (f:Fact {uid: id})
WHERE f.user_id = $user_id
RETURN f.uid AS uid, f.embedding AS embedding
