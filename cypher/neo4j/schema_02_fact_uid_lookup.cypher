// A fact found by its uid alone: the Mem0 facade resolving a memory id that names no user
// (cypher/find_fact_owners.cypher). Writes stay keyed by (user_id, uid).
CREATE INDEX fact_uid_lookup IF NOT EXISTS FOR (f:Fact) ON (f.uid)
