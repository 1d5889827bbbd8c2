// The vectors of the user's relation names (readable forms, singulars) stored by a search,
// with the model that embedded them; no row when none are stored.
MATCH (r:RelationVectors {user_id: $user_id})
RETURN r.model AS model, r.data AS data
LIMIT 1
