// create_history MERGEs on uid: without this every event would scan all History nodes.
CREATE CONSTRAINT history_uid IF NOT EXISTS FOR (h:History) REQUIRE h.uid IS UNIQUE
