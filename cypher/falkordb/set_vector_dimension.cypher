// The store's vector dimension, kept while its vector indexes are dropped (a stop, a bulk load),
// so they are declared again without loading the model. The store's own node: no user's data.
MERGE (s:GraphmemSchema {name: 'vectors'})
SET s.dimension = $dimension
