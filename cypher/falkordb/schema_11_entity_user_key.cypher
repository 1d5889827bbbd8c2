// The user's key joins the entity name index (engine/store/fulltext.py): FalkorDB adds the
// field to the label's fulltext index, and re-indexes its entities once.
CALL db.idx.fulltext.createNodeIndex('Entity', 'user_key')
