// One stored message index per user.
CREATE CONSTRAINT message_index_user IF NOT EXISTS
FOR (m:MessageIndex) REQUIRE m.user_id IS UNIQUE
