// How many :Fact nodes a vector scan of one user would read, counted up to $cap: the user is
// scanned exactly when this stays small (engine/store/records.py, `nearest`).
MATCH (f:Fact {user_id: $user_id})
WITH f LIMIT $cap
RETURN count(f) AS nodes
