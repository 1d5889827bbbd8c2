// Facts are keyed by (user_id, uid): the index merge_facts uses, and no uid of one user can
// collide with another's.
CREATE CONSTRAINT fact_user_uid IF NOT EXISTS FOR (f:Fact) REQUIRE (f.user_id, f.uid) IS UNIQUE
