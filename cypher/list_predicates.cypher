// The distinct predicates of a user's facts, each with how many facts it holds and how many of
// those were said in a message.
MATCH (f:Fact {user_id: $user_id})
RETURN f.predicate AS predicate, count(*) AS facts,
       count(CASE WHEN size(f.episodes) > 0 THEN 1 END) AS said
