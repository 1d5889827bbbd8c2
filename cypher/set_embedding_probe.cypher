// The embedding model's record replaced, for a store that holds no memory any more (every
// user deleted): the next model to embed is the one its vectors will come from. Not scoped
// by a user: it belongs to the store.
MERGE (k:GraphmemKey {name: $name})
SET k.probe = $probe, k.model = $model
RETURN k.probe AS probe, k.model AS model
