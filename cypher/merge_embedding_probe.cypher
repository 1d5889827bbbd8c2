// The store's record of the embedding model that wrote its vectors: that model's vector of a
// fixed sentence, created by the first Memory to embed and read by every one after
// (engine/memory/model_probe.py). Not scoped by a user: it belongs to the store; no user's
// data is read here.
MERGE (k:GraphmemKey {name: $name})
ON CREATE SET k.probe = $probe, k.model = $model
RETURN k.probe AS probe, k.model AS model
