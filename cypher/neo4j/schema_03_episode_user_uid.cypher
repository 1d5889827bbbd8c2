// Episodes are keyed by (user_id, uid), as facts are.
CREATE CONSTRAINT episode_user_uid IF NOT EXISTS
FOR (p:Episode) REQUIRE (p.user_id, p.uid) IS UNIQUE
