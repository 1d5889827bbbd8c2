// The distinct predicates of a user's facts, each with how many facts it holds.
MATCH (f:Fact {user_id: $user_id})
RETURN f.predicate AS predicate, count(*) AS facts
