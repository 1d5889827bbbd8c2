// A user's stored message index, one node per part.
CREATE CONSTRAINT message_index_user_part IF NOT EXISTS
FOR (m:MessageIndex) REQUIRE (m.user_id, m.part) IS UNIQUE
