// The vector dimension recorded before the store's vector indexes were dropped, if any.
MATCH (s:GraphmemSchema {name: 'vectors'})
RETURN s.dimension AS dimension
