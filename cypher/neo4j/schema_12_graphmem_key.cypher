// One secret per name (cypher/merge_graphmem_key.cypher): two processes creating it at once
// cannot leave two.
CREATE CONSTRAINT graphmem_key_name IF NOT EXISTS FOR (k:GraphmemKey) REQUIRE k.name IS UNIQUE
