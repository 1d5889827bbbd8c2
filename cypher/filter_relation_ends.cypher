// Which of $uids are the subject ($subjects) or else the object of a fact relationship of the
// type in __REL_TYPE__ (filled in by the engine, validated).
UNWIND $uids AS uid
MATCH (n:Entity {user_id: $user_id, uid: uid})
WHERE ($subjects AND (n)-[:__REL_TYPE__]->()) OR (NOT $subjects AND (n)<-[:__REL_TYPE__]-())
RETURN uid
