// Replaced by message_index_user_part: a user's index is stored in parts.
DROP CONSTRAINT message_index_user IF EXISTS
