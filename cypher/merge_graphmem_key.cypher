// A secret of the store's own (not of a user), created once and read ever after: the key of
// the Mem0 facade's memory ids (engine/compat/mem0_ids.py). Not scoped by a user: it belongs
// to the store; no user's data is read here.
MERGE (k:GraphmemKey {name: $name})
ON CREATE SET k.secret = $secret
RETURN k.secret AS secret
