// Import: the MENTIONS edges of the exported episodes (restore_episodes wrote them) to the
// entities they name.
UNWIND $rows AS row
MATCH (p:Episode {user_id: $user_id, uid: row.uid})
UNWIND row.entity_uids AS entity_uid
MATCH (e:Entity {user_id: $user_id, uid: entity_uid})
MERGE (p)-[:MENTIONS]->(e)
RETURN count(*) AS result
