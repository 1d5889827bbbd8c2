// Set when facts became true and stopped being true, on both their forms (an update written
// by hand: a merge moves facts with cypher/move_facts.cypher); a row's set_* flag says which
// end it sets.
// A valid_at set takes the row's valid_unit (null: known to the day).
UNWIND $rows AS row
MATCH (f:Fact {user_id: $user_id, uid: row.uid})-[:SUBJECT]->(s:Entity)
OPTIONAL MATCH (s)-[r]->(:Entity)
WHERE r.uid = row.uid AND r.user_id = $user_id
SET f.valid_at = CASE WHEN row.set_valid THEN row.valid_at ELSE f.valid_at END,
    f.valid_unit = CASE WHEN row.set_valid THEN row.valid_unit ELSE f.valid_unit END,
    f.invalid_at = CASE WHEN row.set_invalid THEN row.invalid_at ELSE f.invalid_at END,
    f.updated_at = $now
// a WITH between the two: FalkorDB gives a SET right after a SET the values from before both
WITH f, r
SET r.valid_at = f.valid_at, r.valid_unit = f.valid_unit, r.invalid_at = f.invalid_at
RETURN count(f) AS result
