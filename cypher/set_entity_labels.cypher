// The entity type as a second label (:Entity:Person) for entities that share one type;
// __LABEL__ is a validated PascalCase label. Only where the stored type is that type.
UNWIND $rows AS row
MATCH (e:Entity {user_id: $user_id, uid: row.uid})
WHERE e.type = row.type
SET e:__LABEL__
RETURN count(e) AS result
