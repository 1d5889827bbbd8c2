// sample_relation_ends read through the user's :Fact nodes (`Reads.relation_ends` asks it
// first): up to $k pairs of each type, as long as fewer than $most current facts have the
// $predicates; otherwise no row, and the engine reads them by type (as it does when none of
// them has a current fact: a relation's sample is read again only after `refresh_s`).
// By type, FalkorDB walks every entity of the user once per type (24 types of a chat's
// relations: 7 ms for 77 pairs); here the user's facts are read once and only those of the
// $predicates followed: of the 250 samples of a 4-conversation LoCoMo replay, p95 6.2 -> 1.3
// ms. A relation with hundreds of facts is faster by type, which stops at $k.
// Pairs come by subject, then object, in node order, which no write or reopen changes: a
// typed read follows the entity index, in node order on a store just opened, reordered by
// later writes to its entities.
MATCH (f:Fact {user_id: $user_id})
WHERE f.predicate IN $predicates AND f.invalid_at IS NULL
WITH f LIMIT $most
WITH collect(f) AS facts
WHERE size(facts) < $most
UNWIND facts AS f
MATCH (s:Entity)<-[:SUBJECT]-(f)-[:OBJECT]->(o:Entity)
WITH f.predicate AS predicate, s, o
ORDER BY id(s), id(o)
WITH predicate, collect([s.uid, o.uid]) AS pairs
UNWIND pairs[0..$k] AS pair
RETURN predicate, pair[0] AS subject, pair[1] AS object
