// Before a clean stop (see engine/store/falkordb.py, compact_for_reopen): a vector index kept
// in the snapshot is rebuilt before the server answers anything when it starts again.
DROP VECTOR INDEX FOR (e:Entity) ON (e.embedding)
