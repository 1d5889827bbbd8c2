// History events are keyed by (user_id, uid), as facts are; without this index every
// create_history would scan all History nodes.
CREATE CONSTRAINT history_user_uid IF NOT EXISTS
FOR (h:History) REQUIRE (h.user_id, h.uid) IS UNIQUE
