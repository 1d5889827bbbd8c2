// The distinct predicates of a user's facts.
MATCH (f:Fact {user_id: $user_id})
RETURN DISTINCT f.predicate AS predicate
