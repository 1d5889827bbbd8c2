// One stored set of relation-name vectors per user.
CREATE CONSTRAINT relation_vectors_user IF NOT EXISTS
FOR (r:RelationVectors) REQUIRE r.user_id IS UNIQUE
