// One entity per user and normalized name; also the index that MERGE on (user_id, key) uses.
CREATE CONSTRAINT entity_user_key IF NOT EXISTS
FOR (e:Entity) REQUIRE (e.user_id, e.key) IS UNIQUE
