// Before a clean stop (see engine/store/falkordb_schema.py, drop_for_reopen): an index kept in
// the snapshot is built before the server answers anything when it starts again; the next
// setup declares it again and FalkorDB builds it in the background.
DROP INDEX FOR (h:History) ON (h.user_id)
