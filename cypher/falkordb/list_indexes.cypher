// Each label's indexes with their state; while an index is (re)built FalkorDB lists it twice:
// the one being built ("[Indexing] i/n: UNDER CONSTRUCTION") and the one still in use.
CALL db.indexes() YIELD label, types, status
RETURN label, types, status
