// The users holding a fact with this uid (at most two are asked for: more than one means the
// uid does not name one fact). Not scoped by a user on purpose: the Mem0 facade resolves a
// memory id, which only the store's key turns into this uid, when the caller names no scope
// (Mem0's get, update, delete and history take the id alone).
MATCH (f:Fact {uid: $uid})
RETURN f.user_id AS user_id
LIMIT 2
