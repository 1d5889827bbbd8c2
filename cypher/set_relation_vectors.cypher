// Store the vectors of the user's relation names in place of those stored before. Derived
// data: a reader uses them only when $model embedded them, and embeds the names they lack.
MERGE (r:RelationVectors {user_id: $user_id})
SET r.model = $model, r.data = $data
